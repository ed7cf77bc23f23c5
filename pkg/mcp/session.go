package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// Cancellation modes of an entry: MCP's notifications/cancelled wants no
// response at all; $/cancelRequest wants exactly one CANCELLED.
const (
	notCancelled int32 = iota
	cancelSilently
	cancelWithReply
)

// codeWrongHome answers every request (but ping) on a connection whose shim
// resolves another data directory than the daemon's. It shares -32000, the
// implementation-defined server error, with the store's code.
const codeWrongHome = -32000

// entry is one request that is queued, waiting for a call slot, or running.
type entry struct {
	id     jsonrpc.ID
	key    string
	method string
	params json.RawMessage
	// paramsDoc is params decoded (nil when absent), from the frame's one
	// decode: tools read their arguments from it.
	paramsDoc *jsonval.Doc
	size      int64 // the message's Size, counted in heldBytes while it is pending
	// answer is a reply decided when the request was read (malformed frame,
	// queue overloaded, duplicate id, draining) on a connection that keeps
	// the FIFO. Such an entry is not run; it is written in its place.
	answer []byte

	// meta is the request's own _meta on a modern connection (nil: legacy
	// or plain): its era, client and log level come from it alone.
	meta *reqMeta

	ctx        context.Context
	cancel     context.CancelFunc
	cancelMode atomic.Int32
}

// A session serves one connection. It starts as a FIFO: a worker runs the
// requests one at a time and replies leave in request order, which is what a
// plain JSON-RPC client gets for the whole connection. Once the connection is
// initialized and nothing read before is still unanswered, it turns
// concurrent for good: the reader answers protocol methods itself and each
// tool call runs in its own goroutine, at most MaxConcurrentCalls at once
// (docs/protocol.md, decision 0013).
type session struct {
	srv   *Server
	conn  Conn
	w     *frame.Writer
	log   *zap.Logger
	seq   uint64    // the session's number, to order Clients
	since time.Time // UTC

	// The FIFO.
	queue chan *entry
	// outstanding counts FIFO entries queued, running, or not yet written.
	// Only the reader raises it, so when the reader sees zero, no reply is
	// ahead of the frame it holds and it may answer that frame itself.
	outstanding atomic.Int64
	// concurrent is the reader's own: set once the connection is
	// initialized (or modern) and the FIFO is empty, never cleared.
	concurrent bool
	// era is the reader's own: the protocol era the connection opened with
	// (eraNone until a request decides it; never changed after).
	era int32
	// modern mirrors era == eraModern for other goroutines.
	modern atomic.Bool

	// calls runs tool calls on a concurrent connection.
	calls callQueue

	pendingExec atomic.Int64 // requests queued, waiting or running that will execute
	heldBytes   atomic.Int64 // what those requests' messages hold (Message.Size)
	running     atomic.Int64 // handlers running now (ClientInfo)
	requests    atomic.Uint64

	mu       sync.Mutex
	inflight map[string]*entry
	client   tool.Client
	// Under mu, for Clients.
	protocolVersion string
	shimVersion     string
	home            string // the data directory the shim resolved (its hello)

	// homeRefusal is the error every request but ping gets when the shim
	// resolves another data directory (nil: none).
	homeRefusal  atomic.Pointer[string]
	homeWarnOnce sync.Once

	initialized atomic.Bool
	// rootsCapable: the client declared the roots capability, so the
	// session asks it for roots/list (its workspace folders).
	rootsCapable atomic.Bool
	rootsAsked   atomic.Int64
	rootsWait    chan struct{} // under mu: closed when the latest roots/list is answered
	// subs are the connection's open subscriptions/listen streams, by
	// request id key (under mu).
	subs     map[string]*subscription
	logLevel atomic.Int32
	draining atomic.Bool
	// silenced: nothing more is written, because the peer is gone (a write
	// failed, Conn.Gone closed) or Serve has returned.
	silenced atomic.Bool
	hangOnce sync.Once
	hungUp   chan struct{} // closed when the peer is gone
	goneWhy  error         // set before hungUp is closed

	base      context.Context // parent of every call; cancelled when the session gives up
	cancelAll context.CancelFunc

	stop       chan struct{} // closed to make the worker finish early
	stopOnce   sync.Once
	workerGone chan struct{} // closed when the worker has ended
}

func newSession(s *Server, c Conn, seq uint64) *session {
	base, cancel := context.WithCancel(context.Background())
	sess := &session{
		srv:        s,
		conn:       c,
		w:          frame.NewWriter(c.Writer),
		log:        s.log,
		seq:        seq,
		since:      time.Now().UTC(),
		queue:      make(chan *entry, 4*s.opts.QueueDepth),
		calls:      callQueue{max: s.opts.MaxConcurrentCalls, idle: make(chan struct{})},
		inflight:   map[string]*entry{},
		subs:       map[string]*subscription{},
		client:     c.Client,
		hungUp:     make(chan struct{}),
		base:       base,
		cancelAll:  cancel,
		stop:       make(chan struct{}),
		workerGone: make(chan struct{}),
	}
	sess.logLevel.Store(int32(tool.LevelWarning))
	return sess
}

func (s *session) run(ctx context.Context) error {
	defer s.cancelAll()
	workerDone := make(chan struct{})
	go func() {
		defer close(workerDone)
		s.work()
	}()

	readDone := make(chan error, 1)
	go func() {
		err := s.read()
		close(s.queue) // the reader is the queue's only sender
		readDone <- err
	}()

	// The worker ends when the queue is closed (input ended) or, on a drain
	// or when the peer is gone, as soon as what was queued is answered. Then
	// no more calls are taken (a reader still blocked in Read, as stdin
	// cannot always be interrupted, holds nothing and ends with its
	// transport) and the session ends once every call has ended.
	end := make(chan struct{})
	go func() {
		<-workerDone
		close(s.workerGone)
		s.calls.close()
		<-s.calls.idle
		close(end)
	}()
	go s.watch(ctx, end)

	select {
	case <-end:
	case <-s.hungUp:
		// Nobody is there to answer: handlers were cancelled and get at most
		// the abandon grace to return.
		t := time.NewTimer(s.srv.opts.AbandonGrace)
		select {
		case <-end:
		case <-t.C:
			s.log.Info("the client is gone; not waiting longer for calls that ignore cancellation",
				zap.Duration("grace", s.srv.opts.AbandonGrace))
		}
		t.Stop()
	}
	s.silenced.Store(true) // nothing is written once Serve has returned
	select {
	case <-s.hungUp:
		return s.goneWhy
	default:
	}
	select {
	case err := <-readDone:
		if err != nil && !errors.Is(err, io.EOF) && !s.draining.Load() {
			return err
		}
	default:
	}
	return nil
}

// stopWork tells the worker to answer what is queued and end.
func (s *session) stopWork() { s.stopOnce.Do(func() { close(s.stop) }) }

// watch turns ctx cancellation into a drain and Conn.Gone into a hang-up.
func (s *session) watch(ctx context.Context, end <-chan struct{}) {
	select {
	case <-end:
		return
	case <-s.hungUp:
		return
	case <-s.conn.Gone:
		s.clientGone()
		return
	case <-ctx.Done():
	}
	s.drain()
	t := time.NewTimer(s.srv.opts.DrainTimeout)
	defer t.Stop()
	select {
	case <-end:
	case <-s.hungUp:
	case <-s.conn.Gone:
		s.clientGone()
	case <-t.C:
		s.log.Warn("drain timeout: cancelling the calls still running")
		s.cancelAll()
	}
}

// shuttingDownMessage is what a request refused by a drain is told.
const shuttingDownMessage = "the daemon is shutting down; the request was not run and may be retried"

func (s *session) shuttingDown(id jsonrpc.ID) []byte {
	s.srv.errors.Add(1)
	return jsonrpc.ErrorFrame(id, &jsonrpc.Error{Code: jsonrpc.CodeShuttingDown, Message: shuttingDownMessage})
}

// drain stops reading and taking calls; calls waiting for a slot are refused
// now, running ones are left to finish (watch bounds them).
func (s *session) drain() {
	s.draining.Store(true)
	// Subscriptions end first, while the session is surely still running:
	// once the worker stops, Serve may return and the transport close
	// before a later write.
	s.endSubscriptions()
	s.stopReading()
	s.stopWork()
	waiting := s.calls.closeAndTake()
	for _, e := range waiting {
		s.execute(e) // draining: answered without running
	}
	if len(waiting) > 0 {
		s.flush()
	}
}

// clientGone ends the session because the transport says the peer has gone
// away completely.
func (s *session) clientGone() {
	s.log.Info("the client went away; cancelling its calls")
	s.hangUp(ErrClientGone)
}

// hangUp ends the session because the peer is gone: nothing more is written,
// every call is cancelled (waiting ones never start, running ones see their
// context cancelled) and reading stops.
func (s *session) hangUp(why error) {
	s.hangOnce.Do(func() {
		s.silenced.Store(true)
		s.goneWhy = why
		close(s.hungUp)
		s.cancelAll()
		s.stopReading()
		s.stopWork()
		for _, e := range s.calls.closeAndTake() {
			s.release(e)
		}
	})
}

func (s *session) stopReading() {
	if s.conn.CloseRead != nil {
		_ = s.conn.CloseRead()
	}
}

// read is the reader loop. It never blocks on a running request: it parses,
// answers cancellations at once, and then either queues the request (FIFO)
// or answers it itself or hands it to the call queue (concurrent).
func (s *session) read() error {
	r := frame.NewReader(s.conn.Reader)
	// A line still being read draws on the daemon-wide budget beyond its
	// first frame.FreeLine bytes, with no exemption: every frame an idle
	// client ordinarily sends fits in FreeLine and is always read, while
	// partly sent megabyte lines from many connections cannot add up past
	// the bound (they are answered QUEUE_OVERLOADED).
	r.UseBudget(s.srv.held, nil)
	defer r.Close()
	for {
		line, err := r.Read()
		if s.silenced.Load() {
			return nil
		}
		if !s.concurrent && (s.initialized.Load() || s.era == eraModern) && s.outstanding.Load() == 0 {
			// initialize has been answered (or the connection is modern)
			// and every reply before it is written: from now on nothing
			// depends on the order.
			s.concurrent = true
		}
		if errors.Is(err, frame.ErrTooLarge) {
			s.took(nil, nil, r.Offset())
			s.countRequest()
			s.answer([]byte(jsonrpc.TooLargeFrame))
			continue
		}
		if errors.Is(err, frame.ErrOverloaded) {
			s.took(nil, nil, r.Offset())
			s.countRequest()
			s.srv.overloads.Add(1)
			s.answer(s.daemonOverloaded(nil))
			continue
		}
		if err != nil {
			return err
		}
		msg, perr := jsonrpc.Parse(line)
		s.took(msg, line, r.Offset())
		if perr != nil {
			s.countRequest()
			s.answer(jsonrpc.ErrorFrame(perr.ID, perr.Err))
			continue
		}
		switch msg.Kind {
		case jsonrpc.Notification:
			s.notify(msg)
		case jsonrpc.Response:
			s.response(msg)
		case jsonrpc.Request:
			s.countRequest()
			s.request(msg)
		}
	}
}

// took tells the transport's tracker of a frame before it has any effect.
func (s *session) took(msg *jsonrpc.Message, line []byte, end int64) {
	if s.conn.Tracker != nil {
		s.conn.Tracker.Took(msg, line, end)
	}
}

func (s *session) countRequest() {
	s.srv.requests.Add(1)
	s.requests.Add(1)
}

// answer sends an error reply decided by the reader: in its place in the
// FIFO, or at once on a concurrent connection.
func (s *session) answer(frame []byte) {
	s.srv.errors.Add(1)
	if s.concurrent {
		s.write(frame)
		s.flush()
		return
	}
	s.push(&entry{answer: frame})
}

// push queues an entry. It blocks only when the client floods far past
// QueueDepth (backpressure), and gives up once the worker is gone.
func (s *session) push(e *entry) {
	s.outstanding.Add(1)
	select {
	case s.queue <- e:
	case <-s.workerGone:
	}
}

func newEntry(msg *jsonrpc.Message) *entry {
	return &entry{id: msg.ID, key: msg.ID.Key(), method: msg.Method, params: msg.Params, paramsDoc: msg.ParamsDoc(), size: int64(msg.Size())}
}

// request routes one request read from the connection.
func (s *session) request(msg *jsonrpc.Message) {
	if refusal := s.homeRefusal.Load(); refusal != nil && msg.Method != "ping" {
		s.answer(jsonrpc.ErrorFrame(msg.ID, &jsonrpc.Error{Code: codeWrongHome, Message: *refusal}))
		return
	}
	meta, refusal := s.eraOf(msg)
	if refusal != nil {
		s.answer(jsonrpc.ErrorFrame(msg.ID, refusal))
		return
	}
	if meta != nil && msg.Method == "subscriptions/listen" {
		s.listen(msg, meta)
		return
	}
	if !s.concurrent {
		if s.answerInline(msg, meta) {
			return
		}
		e := newEntry(msg)
		e.meta = meta
		if refusal := s.admit(e); refusal != nil {
			e.answer = refusal
		}
		s.push(e)
		return
	}
	if s.silenced.Load() {
		return
	}
	if s.isCall(msg.Method) {
		s.startCall(msg, meta)
		return
	}
	// A protocol method (or an unknown one): answered here and now.
	if s.draining.Load() {
		s.write(s.shuttingDown(msg.ID))
		s.flush()
		return
	}
	if s.pending(msg.ID.Key()) {
		s.answer(duplicateID(msg.ID))
		return
	}
	e := &entry{id: msg.ID, key: msg.ID.Key(), method: msg.Method, params: msg.Params, paramsDoc: msg.ParamsDoc(), meta: meta}
	if reply := s.dispatch(e); reply != nil {
		s.write(reply)
	}
	s.flush()
}

// eraOf fixes the connection's era with the first request that decides it
// and checks the request against it: on a modern connection it returns the
// request's own _meta (nil for ping and plain tool methods, which need
// none); a request that does not belong to the connection's era, or whose
// _meta is malformed, gets the error to answer it with.
func (s *session) eraOf(msg *jsonrpc.Message) (*reqMeta, *jsonrpc.Error) {
	if _, plain := s.plainMethod(msg.Method); plain {
		return nil, nil // plain JSON-RPC: outside both eras
	}
	d := msg.ParamsDoc()
	switch s.era {
	case eraNone:
		switch {
		case msg.Method == "initialize":
			s.era = eraLegacy
			return nil, nil
		case modernShaped(d):
			s.era = eraModern
			s.modern.Store(true)
			if s.outstanding.Load() == 0 {
				s.concurrent = true // nothing is ahead of this request
			}
		case msg.Method == "server/discover":
			// Not modern yet: a client that falls back to initialize on
			// this error still can.
			_, err := readMeta(d)
			return nil, err
		default:
			return nil, nil
		}
	case eraLegacy:
		if msg.Method == "server/discover" || modernShaped(d) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: this connection opened with initialize (a 2025 session); " +
				"requests with _meta " + strconv.Quote(metaProtocolVersion) + " and server/discover need a new connection"}
		}
		return nil, nil
	}
	// A modern connection.
	switch msg.Method {
	case "initialize":
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: this connection speaks protocol " + ModernVersions[0] +
			" (per-request _meta); initialize belongs to the 2025 versions and needs a new connection"}
	case "ping":
		return nil, nil
	}
	m, err := readMeta(d)
	if err != nil {
		return nil, err
	}
	s.noteModernClient(&m)
	return &m, nil
}

// isCall reports whether a method runs a tool: tools/call, or a tool served
// as a plain method.
func (s *session) isCall(method string) bool {
	switch method {
	case "tools/call":
		return true
	case "ping", "initialize", "tools/list", "logging/setLevel",
		"resources/list", "resources/read", "resources/templates/list",
		"server/discover", "subscriptions/listen":
		return false
	}
	_, plain := s.plainMethod(method)
	return plain
}

// startCall admits a tool call on a concurrent connection and hands it to
// the call queue; a refusal is answered at once.
func (s *session) startCall(msg *jsonrpc.Message, meta *reqMeta) {
	e := newEntry(msg)
	e.meta = meta
	if refusal := s.admit(e); refusal != nil {
		s.write(refusal)
		s.flush()
		return
	}
	if s.submit(e) {
		return
	}
	// The session stopped taking calls meanwhile (a drain, or the peer is
	// gone): execute answers it without running it, or not at all.
	s.execute(e)
	s.flush()
}

// inlineMethods are answered from memory at once on a FIFO connection when
// nothing is ahead of them: handing them to the worker would cost a
// cross-thread wake-up that dominates their round trip.
var inlineMethods = map[string]bool{"ping": true, "initialize": true, "tools/list": true, "logging/setLevel": true, "server/discover": true}

// answerInline answers a cheap protocol request in the reader when nothing
// is outstanding on a FIFO connection, so the reply cannot overtake another.
func (s *session) answerInline(msg *jsonrpc.Message, meta *reqMeta) bool {
	if !inlineMethods[msg.Method] || s.outstanding.Load() != 0 || s.draining.Load() || s.silenced.Load() {
		return false
	}
	e := &entry{id: msg.ID, key: msg.ID.Key(), method: msg.Method, params: msg.Params, paramsDoc: msg.ParamsDoc(), meta: meta}
	if reply := s.dispatch(e); reply != nil {
		s.write(reply)
	}
	s.flush()
	return true
}

// admit registers a request that will execute (it is then pending until
// release), or returns the reply refusing it: the session is draining, the
// connection holds too much, or its id is still pending.
func (s *session) admit(e *entry) []byte {
	if s.draining.Load() {
		e.params, e.paramsDoc = nil, nil
		return s.shuttingDown(e.id)
	}
	pending := s.pendingExec.Load()
	if pending >= int64(s.srv.opts.QueueDepth) ||
		(pending > 0 && s.heldBytes.Load()+e.size > s.srv.opts.QueueBytes) {
		e.params, e.paramsDoc = nil, nil // answered from here: hold nothing
		s.srv.errors.Add(1)
		return s.overloaded(e)
	}
	// The daemon-wide bound: what every connection's pending requests hold
	// together. A connection with nothing pending is always served.
	if !s.srv.held.Take(e.size, pending == 0) {
		e.params, e.paramsDoc = nil, nil
		s.srv.errors.Add(1)
		s.srv.overloads.Add(1)
		return s.daemonOverloaded(e)
	}
	s.mu.Lock()
	if _, dup := s.inflight[e.key]; dup {
		s.mu.Unlock()
		s.srv.held.Give(e.size)
		e.params, e.paramsDoc = nil, nil
		s.srv.errors.Add(1)
		return duplicateID(e.id)
	}
	e.ctx, e.cancel = context.WithCancel(s.base)
	s.inflight[e.key] = e
	s.mu.Unlock()
	s.heldBytes.Add(e.size)
	s.pendingExec.Add(1)
	return nil
}

// release ends an admitted request's hold on the session: its id may be used
// again and its frame no longer counts. It is called exactly once per
// admitted entry, before its reply is written (a client that has the reply
// may reuse the id at once).
func (s *session) release(e *entry) {
	s.mu.Lock()
	if s.inflight[e.key] == e {
		delete(s.inflight, e.key)
	}
	s.mu.Unlock()
	e.cancel()
	// The reply is all that is left to send: let the frame go.
	e.params, e.paramsDoc = nil, nil
	s.heldBytes.Add(-e.size)
	s.srv.held.Give(e.size)
	s.pendingExec.Add(-1)
}

func (s *session) pending(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.inflight[key]
	return ok
}

// duplicateID refuses a request whose id is that of a request still in
// flight on the connection: its own code, so that a client can tell this
// reply from the one its first request will get.
func duplicateID(id jsonrpc.ID) []byte {
	return jsonrpc.ErrorFrame(id, &jsonrpc.Error{Code: jsonrpc.CodeDuplicateID,
		Message: "Invalid Request: a request with this id is still in flight on this connection; this one was not run (ids must be unique among requests in flight)",
		Data:    map[string]string{"code": "DUPLICATE_ID"}})
}

func (s *session) overloaded(e *entry) []byte {
	return s.overloadedReply(e, "the connection's queue is full; retry later or send fewer requests at once")
}

// daemonOverloaded refuses a request (or, e nil, a line read only in part)
// because every connection's pending requests together hold the
// daemon-wide limit (Options.MaxHeldBytes).
func (s *session) daemonOverloaded(e *entry) []byte {
	return s.overloadedReply(e, "the daemon holds as many unanswered requests as it may; retry later")
}

// overloadedReply is QUEUE_OVERLOADED: an isError result for tools/call,
// error -32001 otherwise (id null when e is nil).
func (s *session) overloadedReply(e *entry, msg string) []byte {
	if e != nil && e.method == "tools/call" {
		res, _ := toolResult((&tool.Error{Code: tool.QueueOverloaded, Message: msg}).Object(), true)
		return s.ok(e, res)
	}
	var id jsonrpc.ID // null
	if e != nil {
		id = e.id
	}
	return jsonrpc.ErrorFrame(id, &jsonrpc.Error{Code: jsonrpc.CodeOverloaded, Message: msg, Data: map[string]string{"code": string(tool.QueueOverloaded)}})
}

// notify handles a notification at once, in the reader: cancellations must
// not wait behind the request they cancel.
func (s *session) notify(msg *jsonrpc.Message) {
	switch msg.Method {
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(msg.Params, &p) == nil {
			s.cancelRequest(jsonrpc.Key(p.RequestID), cancelSilently)
		}
	case "$/cancelRequest":
		var p struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(msg.Params, &p) == nil {
			s.cancelRequest(jsonrpc.Key(p.ID), cancelWithReply)
		}
	case "$/hearth/tooLarge":
		// The shim read a line over the guard and discarded it; the client
		// must still get the payload_too_large reply (in its place on a FIFO
		// connection).
		s.countRequest()
		s.answer([]byte(jsonrpc.TooLargeFrame))
	case "notifications/initialized", "notifications/roots/list_changed":
		// Requests are served once initialize has been answered; what is
		// left is to learn the client's workspace.
		if s.rootsCapable.Load() {
			s.requestRoots()
		}
	case "$/hearth/hello":
		s.hello(msg)
	default:
		// Unknown notifications are ignored, as JSON-RPC requires.
	}
}

// hello takes the shim's $/hearth/hello: the client's directory and pid, the
// shim's version, and the data directory the shim resolved.
func (s *session) hello(msg *jsonrpc.Message) {
	var p struct {
		Cwd     string `json:"cwd"`
		PID     int    `json:"pid"`
		Version string `json:"version"`
		Home    string `json:"home"`
	}
	if json.Unmarshal(msg.Params, &p) != nil {
		return
	}
	s.mu.Lock()
	if p.Cwd != "" && p.Cwd[0] == '/' {
		s.client.Cwd = p.Cwd
	}
	if p.PID > 0 {
		s.client.PID = p.PID
	}
	s.shimVersion = p.Version
	if filepath.IsAbs(p.Home) {
		s.home = p.Home
	}
	pid := s.client.PID
	s.mu.Unlock()
	if !filepath.IsAbs(p.Home) || s.srv.opts.Home == "" {
		return
	}
	if sameDir(s.srv.opts.Home, p.Home) {
		s.homeRefusal.Store(nil)
		return
	}
	refusal := fmt.Sprintf("this hearth daemon (pid %d) serves the data directory %s, but this client resolves %s; set HEARTH_HOME (or MCP_SOCKET_PATH) so they agree",
		os.Getpid(), s.srv.opts.Home, p.Home)
	s.homeRefusal.Store(&refusal)
	s.homeWarnOnce.Do(func() {
		s.log.Warn("a client resolves another data directory; refusing its requests",
			zap.String("home", s.srv.opts.Home), zap.String("client_home", p.Home), zap.Int("client_pid", pid))
	})
}

// sameDir compares two directories after cleaning them and resolving
// symbolic links (when that fails, as for a directory not made yet, the
// cleaned path stands).
func sameDir(a, b string) bool {
	resolve := func(p string) string {
		p = filepath.Clean(p)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	return resolve(a) == resolve(b)
}

// rootsIDPrefix marks the ids of the session's own roots/list requests.
const rootsIDPrefix = "hearth-roots-"

// requestRoots asks the client for its roots (MCP roots/list). The answer
// arrives as a response, handled by the reader.
func (s *session) requestRoots() {
	n := s.rootsAsked.Add(1)
	s.mu.Lock()
	s.rootsWait = make(chan struct{})
	s.mu.Unlock()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rootsIDPrefix + strconv.FormatInt(n, 10), "method": "roots/list"})
	if err != nil {
		return
	}
	s.write(b)
	s.flush()
}

// response handles a response from the client: only answers to the
// session's own roots/list requests are expected; anything else is dropped.
func (s *session) response(msg *jsonrpc.Message) {
	var id string
	if json.Unmarshal(msg.ID.Raw(), &id) != nil || !strings.HasPrefix(id, rootsIDPrefix) {
		s.log.Debug("dropped a response from the client", zap.String("id", msg.ID.Key()))
		return
	}
	// Answers to an older request are stale once a newer one was sent.
	if n, err := strconv.ParseInt(strings.TrimPrefix(id, rootsIDPrefix), 10, 64); err != nil || n != s.rootsAsked.Load() {
		return
	}
	defer s.rootsAnswered()
	if len(msg.Error) > 0 {
		s.log.Debug("the client refused roots/list", zap.ByteString("error", msg.Error))
		return
	}
	var r struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	if json.Unmarshal(msg.Result, &r) != nil {
		s.log.Debug("malformed roots/list result", zap.ByteString("result", msg.Result))
		return
	}
	roots := make([]string, 0, len(r.Roots))
	for _, root := range r.Roots {
		if p, ok := fileURIPath(root.URI); ok {
			roots = append(roots, p)
		}
	}
	s.mu.Lock()
	s.client.Roots = roots
	s.mu.Unlock()
}

// rootsAnswered releases calls waiting for the roots.
func (s *session) rootsAnswered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rootsWait != nil {
		close(s.rootsWait)
		s.rootsWait = nil
	}
}

// rootsWaitMax bounds how long a tool call waits for the client to answer
// roots/list: long enough for any live client, short enough that one that
// never answers costs a single call this much once.
const rootsWaitMax = 2 * time.Second

// awaitRoots lets a tool call that arrives right after initialization wait
// until the client has said what its roots are, so the repository it works
// on does not depend on a race.
func (s *session) awaitRoots(ctx context.Context) {
	s.mu.Lock()
	ch := s.rootsWait
	s.mu.Unlock()
	if ch == nil {
		return
	}
	t := time.NewTimer(rootsWaitMax)
	defer t.Stop()
	select {
	case <-ch:
	case <-ctx.Done():
	case <-t.C:
		s.log.Info("the client did not answer roots/list; going on without its roots", zap.Duration("waited", rootsWaitMax))
		s.rootsAnswered()
	}
}

// fileURIPath returns the local path of a file:// URI (MCP roots are file
// URIs); ok is false for anything else.
func fileURIPath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || !path.IsAbs(u.Path) {
		return "", false
	}
	return path.Clean(u.Path), true
}

func (s *session) cancelRequest(key string, mode int32) {
	if key == "" {
		return
	}
	s.mu.Lock()
	e := s.inflight[key]
	s.mu.Unlock()
	if e == nil {
		return // unknown or finished: ignored
	}
	if e.method == "subscriptions/listen" {
		s.unlisten(e, mode == cancelWithReply)
		return
	}
	e.cancelMode.CompareAndSwap(notCancelled, mode)
	e.cancel()
	// A call still waiting for a slot never starts; it is answered now
	// rather than when a slot frees.
	if s.calls.remove(e) {
		s.release(e)
		if e.cancelMode.Load() == cancelWithReply {
			s.write(s.cancelledReply(e))
			s.flush()
		}
	}
}

func (s *session) clientInfo() tool.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.client
	c.Roots = append([]string(nil), c.Roots...)
	return c
}

// work is the FIFO: one entry at a time, replies in order. Replies are
// buffered and flushed when the queue runs dry or before a call that may take
// time, so pipelined requests share system calls but no reply waits on work.
func (s *session) work() {
	defer s.flush()
	for {
		select {
		case e, ok := <-s.queue:
			if !ok {
				return
			}
			s.handle(e)
		case <-s.stop:
			// Draining or the peer is gone: answer what is already queued
			// (execute refuses to start anything new), then end.
			for {
				select {
				case e, ok := <-s.queue:
					if !ok {
						return
					}
					s.handle(e)
				default:
					return
				}
			}
		}
	}
}

func (s *session) handle(e *entry) {
	if e.answer != nil {
		s.write(e.answer)
	} else {
		s.execute(e)
	}
	// The reply is in the writer's buffer, ahead of anything the reader
	// writes from now on: the reader may answer inline (and, once the
	// connection is initialized, turn concurrent). Counting it down before
	// the flush means a client that has read the reply finds it so.
	s.outstanding.Add(-1)
	if len(s.queue) == 0 {
		s.flush()
	}
}

// execute runs an admitted request and writes its reply (buffered; the
// caller flushes).
func (s *session) execute(e *entry) {
	reply := s.replyTo(e)
	s.release(e)
	if reply != nil {
		s.write(reply)
	}
}

func (s *session) replyTo(e *entry) []byte {
	if s.silenced.Load() {
		return nil
	}
	// A request cancelled before it started never starts.
	switch e.cancelMode.Load() {
	case cancelSilently:
		return nil
	case cancelWithReply:
		return s.cancelledReply(e)
	}
	if s.draining.Load() {
		return s.shuttingDown(e.id)
	}
	return s.dispatch(e)
}

func (s *session) cancelledReply(e *entry) []byte {
	s.srv.errors.Add(1)
	if e.method == "tools/call" {
		res, _ := toolResult((&tool.Error{Code: tool.Cancelled, Message: "the request was cancelled by the client"}).Object(), true)
		return s.ok(e, res)
	}
	return jsonrpc.ErrorFrame(e.id, &jsonrpc.Error{Code: jsonrpc.CodeCancelled, Message: "Request cancelled"})
}

func (s *session) write(b []byte) {
	if s.silenced.Load() {
		return
	}
	if err := s.w.WriteRaw(b); err != nil {
		s.failWrite(err)
	}
}

func (s *session) flush() {
	if s.silenced.Load() {
		return
	}
	if err := s.w.Flush(); err != nil {
		s.failWrite(err)
	}
}

// failWrite ends the session: nobody is reading, so running work is cancelled
// and the reader is stopped.
func (s *session) failWrite(err error) {
	if s.silenced.Load() {
		return
	}
	s.log.Info("client stopped reading; ending the session", zap.Error(err))
	s.hangUp(ErrWriteFailed)
}

// notifyClient sends a notification now (progress, log messages).
func (s *session) notifyClient(method string, params any) {
	b, err := jsonrpc.NotificationFrame(method, params)
	if err != nil {
		s.log.Error("notification did not marshal", zap.String("method", method), zap.Error(err))
		return
	}
	s.write(b)
	s.flush()
}
