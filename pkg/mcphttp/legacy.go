package mcphttp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/mcp"
)

// legacySession is a 2025 session: one mcp session fed by many POSTs, its
// frames routed to the POST of the request each belongs to, the rest to the
// session's own stream.
type legacySession struct {
	id   string
	path string // the endpoint it was opened on: only that one reaches it

	in       chan inFrame  // the frames POSTs bring (the session's FrameSource)
	stopRead chan struct{} // closed when the session stops reading
	stopOnce sync.Once
	gone     chan struct{} // closed when the client ended the session (DELETE) or it expired
	goneOnce sync.Once
	ended    chan struct{} // closed when Serve has returned
	off      int64         // the reader's own

	mu      sync.Mutex
	open    map[string]*stream // POST streams awaiting their reply, by request key
	streams map[int64]*stream  // every stream kept for resumption, by id
	order   []int64            // finished POST streams, oldest first
	own     *stream
	nextID  int64
	used    time.Time // the last request, or now while a stream is followed
	kept    *kept     // its record on disk (nil: none is kept)
	follows int       // responses following a stream now

	// What the streams keep for resumption: held bytes, of at most
	// maxHeld, drawn on replay (nil: none) and counted in total (the
	// Handler's). ended: given back, and no longer counted.
	held, maxHeld int64
	replay        *frame.Budget
	total         *atomic.Int64
	released      bool
}

// keptStreams bounds the finished POST streams a session keeps for clients
// that resume them.
const keptStreams = 64

func newLegacySession() *legacySession {
	var b [16]byte
	_, _ = rand.Read(b[:])
	s := &legacySession{
		id:       hex.EncodeToString(b[:]),
		in:       make(chan inFrame, 64),
		stopRead: make(chan struct{}),
		gone:     make(chan struct{}),
		ended:    make(chan struct{}),
		open:     map[string]*stream{},
		streams:  map[int64]*stream{},
		used:     time.Now(),
	}
	s.own = newStream(0, true)
	s.streams[0] = s.own
	s.nextID = 1
	return s
}

// inFrame is a frame a POST hands in, with its message as the POST decoded
// it (nil: the session decodes it).
type inFrame struct {
	msg *jsonrpc.Message
	b   []byte
}

// ReadMessage is the session's MessageSource: the frames POSTs hand in,
// decoded once, by the POST (docs/decisions/0011).
func (s *legacySession) ReadMessage() (*jsonrpc.Message, []byte, error) {
	select {
	case f := <-s.in:
		s.off += int64(len(f.b))
		return f.msg, f.b, nil
	case <-s.stopRead:
		return nil, nil, io.EOF
	}
}

// Read is the frames without their messages (FrameSource).
func (s *legacySession) Read() ([]byte, error) {
	_, b, err := s.ReadMessage()
	return b, err
}

func (s *legacySession) Offset() int64 { return s.off }
func (s *legacySession) Close()        {}

func (s *legacySession) closeRead() error {
	s.stopOnce.Do(func() { close(s.stopRead) })
	return nil
}

func (s *legacySession) hangUp() { s.goneOnce.Do(func() { close(s.gone) }) }

// Send is the session's FrameSink: a frame of a request whose POST is
// waiting goes on that POST's stream (its reply ends it), as the transport
// says messages about a request go; anything else on the session's own
// stream, and so does a request of the server's about a POST answered
// with JSON, which carries nothing but its reply: the client must see it
// to answer it (docs/protocol.md, "Hosted servers over HTTP").
func (s *legacySession) Send(b []byte, re string) error {
	data := append([]byte(nil), b...)
	e, scanned := envelope.Scan(data)
	isReply := scanned && e.Kind() == envelope.Response
	if re == "" && isReply {
		// A reply written without its label (a hosted server's, relayed
		// as the upstream wrote it) belongs to the request it answers.
		re = envelope.Key(e.ID)
	}
	s.mu.Lock()
	st := s.open[re]
	if st != nil && st.plain && scanned && e.Kind() == envelope.Request {
		st = nil
	}
	final := false
	if st != nil && re != "" {
		if isReply {
			final = true
			delete(s.open, re)
			s.order = append(s.order, st.id)
			if len(s.order) > keptStreams {
				old := s.streams[s.order[0]]
				delete(s.streams, s.order[0])
				s.order = s.order[1:]
				s.count(-old.forget())
			}
		}
	} else {
		st = s.own
	}
	s.mu.Unlock()
	s.hold(st.add(data, final))
	return nil
}

// hold counts delta more bytes kept (less when negative) and, past the
// session's bound or with the replay budget spent, sheds what no follower
// still needs: the oldest finished streams first, then what the session's
// own stream and the requests still running have delivered. An event still
// to be written is kept whatever the bounds: it is in flight, not kept.
func (s *legacySession) hold(delta int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return
	}
	s.count(delta)
	over := func() bool {
		return s.held > s.maxHeld || (s.replay != nil && s.replay.Used() > s.replay.Max())
	}
	if !over() {
		return
	}
	for _, id := range s.order {
		s.count(-s.streams[id].shed())
		if !over() {
			return
		}
	}
	s.count(-s.own.shed())
	for _, st := range s.open {
		if !over() {
			return
		}
		s.count(-st.shed())
	}
}

// count adds delta to what the session holds (s.mu held).
func (s *legacySession) count(delta int64) {
	if delta == 0 {
		return
	}
	s.held += delta
	if s.total != nil {
		s.total.Add(delta)
	}
	if s.replay != nil {
		if delta > 0 {
			s.replay.Take(delta, true)
		} else {
			s.replay.Give(-delta)
		}
	}
}

// release gives back everything the session holds, once it has ended: its
// streams can no longer be resumed, and what responses still write is
// theirs until they finish.
func (s *legacySession) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count(-s.held)
	s.released = true
}

// unfollow ends a response's following of st and sheds what the session
// holds past its bounds now that the response no longer needs it.
func (s *legacySession) unfollow(st *stream) {
	st.following(-1)
	s.hold(0)
}

// Flush: each event is delivered as it is added.
func (s *legacySession) Flush() error { return nil }

// openStream registers the stream a request's frames go to, before the
// request reaches the session; nil when a request with that id is still
// waiting for its reply.
func (s *legacySession) openStream(key string, req jsonrpc.ID, plain bool) *stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.open[key]; dup {
		return nil
	}
	st := newStream(s.nextID, false)
	st.req, st.plain = req, plain
	s.nextID++
	s.open[key] = st
	s.streams[st.id] = st
	return st
}

func (s *legacySession) touch(following int) {
	s.mu.Lock()
	s.used = time.Now()
	s.follows += following
	s.mu.Unlock()
}

// idleSince is when the session was last used (zero while a stream is
// followed).
func (s *legacySession) idleSince() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.follows > 0 {
		return time.Time{}
	}
	return s.used
}

// whileServed is parent, also cancelled once the session's Serve has
// returned: a stream that follows the session ends with it.
func (s *legacySession) whileServed(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-s.ended:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// hand gives a frame and its message (nil: not decoded) to the session;
// false when it has ended.
func (s *legacySession) hand(ctx context.Context, msg *jsonrpc.Message, b []byte) bool {
	select {
	case s.in <- inFrame{msg, b}:
		return true
	case <-s.ended:
		return false
	case <-s.stopRead:
		return false
	case <-ctx.Done():
		return false
	}
}

// openSession serves initialize: a new session, named in the reply's
// Mcp-Session-Id.
func (h *Handler) openSession(p post) {
	s := newLegacySession()
	s.path = p.r.URL.Path
	if e := h.start(s, p.run, true); e != nil {
		refuseID(p.w, http.StatusServiceUnavailable, p.msg.ID, e)
		return
	}
	h.keepNew(s, p.msg.Params)
	h.request(p, s, true)
}

// start serves s, reachable at once when visible (otherwise once taken back,
// see takeBack); the error says why it was refused.
func (h *Handler) start(s *legacySession, run json.RawMessage, visible bool) *jsonrpc.Error {
	s.maxHeld, s.replay, s.total = h.opts.MaxReplay, h.opts.Replay, &h.replayHeld
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return &jsonrpc.Error{Code: jsonrpc.CodeShuttingDown, Message: "the daemon is shutting down; retry later"}
	}
	if len(h.sessions) >= h.opts.MaxSessions {
		h.mu.Unlock()
		return &jsonrpc.Error{Code: jsonrpc.CodeOverloaded,
			Message: "too many MCP sessions are open over HTTP; end one (DELETE) or retry later"}
	}
	if visible {
		h.sessions[s.id] = s
	}
	h.wg.Add(1)
	h.mu.Unlock()
	conn := mcp.Conn{Source: s, Sink: s, CloseRead: s.closeRead, Gone: s.gone, Transport: "http", Run: run}
	go func() {
		defer h.wg.Done()
		err := h.opts.Serve(h.base, conn)
		s.release()
		h.mu.Lock()
		if h.sessions[s.id] == s {
			delete(h.sessions, s.id)
		}
		h.mu.Unlock()
		h.forget(s)
		// Ended once nothing of it is left: a DELETE answered 204 finds
		// neither the session nor its record (both were still there
		// when ended came first).
		close(s.ended)
		if err != nil {
			h.log.Debug("HTTP session ended", zap.String("session", s.id), zap.Error(err))
		}
	}()
	return nil
}

// session is the open 2025 session id, or nil: a session is reached only
// through the endpoint (path) that opened it.
func (h *Handler) session(id, path string) *legacySession {
	h.mu.Lock()
	s := h.sessions[id]
	h.mu.Unlock()
	if s == nil || s.path != path {
		return nil
	}
	return s
}

// sessionOrKept is the open session id or, when there is none, the one an
// earlier daemon kept a record of, taken back (nil: neither).
func (h *Handler) sessionOrKept(ctx context.Context, id, path string) *legacySession {
	if s := h.session(id, path); s != nil {
		h.keepUsed(s, false)
		return s
	}
	if s := h.takeBackOnce(ctx, id, path); s != nil && s.path == path {
		return s
	}
	return nil
}

// postToSession serves a POST to an open 2025 session.
func (h *Handler) postToSession(p post, id string) {
	s := h.sessionOrKept(p.r.Context(), id, p.r.URL.Path)
	if s == nil {
		refuseID(p.w, http.StatusNotFound, p.msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "Not Found: no such session (it ended, or the daemon restarted); initialize a new one"})
		return
	}
	s.touch(0)
	if p.msg.Kind != jsonrpc.Request {
		if !s.hand(p.r.Context(), p.msg, p.body) {
			refuse(p.w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "Not Found: the session ended")
			return
		}
		p.w.WriteHeader(http.StatusAccepted)
		return
	}
	if p.msg.Method == "initialize" {
		refuseID(p.w, http.StatusBadRequest, p.msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "Bad Request: initialize opens a new session; send it without Mcp-Session-Id"})
		return
	}
	if p.msg.Method == "logging/setLevel" {
		h.keepLevel(s, p.msg.Params)
	}
	h.request(p, s, false)
}

// request hands a request to the session and writes what belongs to it: an
// SSE stream (its progress and log messages, then its reply) when the
// client takes one, else the reply alone as JSON.
func (h *Handler) request(p post, s *legacySession, opening bool) {
	key := p.msg.ID.Key()
	st := s.openStream(key, p.msg.ID, !p.sse)
	if st == nil {
		refuseID(p.w, http.StatusConflict, p.msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeDuplicateID,
			Message: "Invalid Request: a request with this id is still in flight in this session; this one was not run (ids must be unique among requests in flight)",
			Data:    map[string]string{"code": "DUPLICATE_ID"}})
		return
	}
	if !s.hand(p.r.Context(), p.msg, p.body) {
		refuseID(p.w, http.StatusNotFound, p.msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Not Found: the session ended"})
		return
	}
	header := func(hd http.Header) {
		if opening {
			hd.Set("Mcp-Session-Id", s.id)
		}
	}
	s.touch(1)
	defer s.touch(-1)
	st.following(1)
	defer s.unfollow(st)
	if !p.sse {
		// JSON: wait for the reply alone; notifications about the request
		// have nowhere to go and are dropped.
		for {
			evs, _, done, wake := st.after(0)
			if done {
				header(p.w.Header())
				p.w.Header().Set("Content-Type", "application/json")
				p.w.WriteHeader(http.StatusOK)
				_, _ = p.w.Write(evs[len(evs)-1])
				return
			}
			select {
			case <-wake:
			case <-p.r.Context().Done():
				return
			case <-s.ended:
				if _, _, done, _ := st.after(0); !done {
					refuseID(p.w, http.StatusServiceUnavailable, p.msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeShuttingDown,
						Message: "the request was not answered: its session ended (the daemon is shutting down, or the session was deleted)"})
					return
				}
			}
		}
	}
	sw := startSSE(p.w, header)
	sw.prime(st.eventID(0))
	if sw.flush() != nil {
		return
	}
	ctx, cancel := s.whileServed(p.r.Context())
	defer cancel()
	sw.follow(ctx, st, 0)
}

// get opens the session's own stream, or resumes a stream from
// Last-Event-ID.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	if sse, _ := accepts(r.Header.Values("Accept")); !sse {
		refuse(w, http.StatusNotAcceptable, jsonrpc.CodeInvalidRequest, "Not Acceptable: GET opens an SSE stream; Accept must include text/event-stream")
		return
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		w.Header().Set("Allow", "POST")
		refuse(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest,
			"Method Not Allowed: GET opens a 2025 session's stream and needs its Mcp-Session-Id; a 2026-07-28 client listens with subscriptions/listen")
		return
	}
	s := h.sessionOrKept(r.Context(), id, r.URL.Path)
	if s == nil {
		refuse(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "Not Found: no such session (it ended, or the daemon restarted); initialize a new one")
		return
	}
	st, seq := s.own, int64(0)
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		sid, n, ok := parseEventID(last)
		if !ok {
			refuse(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "Bad Request: Last-Event-ID is not an event id this server sent")
			return
		}
		s.mu.Lock()
		st = s.streams[sid]
		s.mu.Unlock()
		if st == nil {
			refuse(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "Not Found: that stream is no longer kept; its events cannot be replayed")
			return
		}
		seq = n
		if st.own {
			// An event id past what this stream has sent was sent in
			// an earlier daemon's life of a session taken back: the
			// client hears what is sent from now on.
			seq = min(seq, st.last())
		}
	}
	if st.own {
		st.mu.Lock()
		busy := st.attached
		st.attached = !busy
		st.mu.Unlock()
		if busy {
			refuse(w, http.StatusConflict, jsonrpc.CodeInvalidRequest, "Conflict: this session's stream is already open on another request")
			return
		}
		defer func() { st.mu.Lock(); st.attached = false; st.mu.Unlock() }()
		if r.Header.Get("Last-Event-ID") == "" {
			// A new GET hears what is sent from now on, and what was
			// sent while no stream was open (a roots/list request sent
			// right after initialized, before the client opened it).
			seq = st.delivered()
		}
	}
	s.touch(1)
	defer s.touch(-1)
	st.following(1)
	defer s.unfollow(st)
	sw := startSSE(w, nil)
	if st.own && r.Header.Get("Last-Event-ID") == "" {
		sw.prime(st.eventID(seq))
	}
	if sw.flush() != nil {
		return
	}
	ctx, cancel := s.whileServed(r.Context())
	defer cancel()
	sw.follow(ctx, st, seq)
}

// delete ends a session: its calls are cancelled, as when a socket client
// hangs up.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		refuse(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "Bad Request: DELETE ends a session and needs its Mcp-Session-Id")
		return
	}
	s := h.session(id, r.URL.Path)
	if s == nil {
		if h.forgetKept(id, r.URL.Path) {
			// Kept by an earlier daemon: ended without being taken back.
			w.WriteHeader(http.StatusNoContent)
			return
		}
		refuse(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "Not Found: no such session")
		return
	}
	s.hangUp()
	<-s.ended
	w.WriteHeader(http.StatusNoContent)
}

// expire ends sessions nobody has used for SessionIdle.
func (h *Handler) expire() {
	t := time.NewTicker(h.opts.SessionIdle / 4)
	defer t.Stop()
	for {
		select {
		case <-h.base.Done():
			return
		case now := <-t.C:
			h.mu.Lock()
			var idle, live []*legacySession
			for _, s := range h.sessions {
				if u := s.idleSince(); !u.IsZero() && now.Sub(u) > h.opts.SessionIdle {
					idle = append(idle, s)
				} else {
					live = append(live, s)
				}
			}
			h.mu.Unlock()
			h.keepLive(live, now)
			for _, s := range idle {
				h.log.Info("ending an HTTP session unused for too long", zap.String("session", s.id), zap.Duration("idle", h.opts.SessionIdle))
				s.hangUp()
			}
		}
	}
}
