package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
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
//
// The session is the reader loop and the routing of each frame; its state
// lives in parts, each owning its own and guarding it itself (see
// docs/architecture.md, "The session in parts"):
//
//   - out: where frames go (the transport's FrameSink) and whether anything
//     may still be written (outbox.go);
//   - life: drain and hang-up, and the context every call derives from
//     (hangup.go);
//   - fifo: the FIFO queue and its worker (fifo.go); calls: the concurrent
//     connection's call slots (calls.go);
//   - pend: the requests in flight and the open subscriptions, and what
//     they hold (pending.go);
//   - nego: the era, initialization, log level and roots negotiated with
//     the client (negotiate.go);
//   - peer: who the client is, for tools and for status (peer.go).
type session struct {
	srv   *Server
	conn  Conn
	log   *zap.Logger
	seq   uint64    // the session's number, to order Clients
	since time.Time // UTC

	out   outbox
	life  lifecycle
	fifo  fifo
	calls callQueue
	pend  pending
	nego  negotiation
	peer  peer
	// hosted: the hosted server the shim's hello asked for (hosted.go).
	hosted hostedPart

	// concurrent is the reader's own: set once the connection is
	// initialized (or modern) and the FIFO is empty, never cleared.
	concurrent bool

	running  atomic.Int64 // handlers running now (ClientInfo)
	requests atomic.Uint64
}

func newSession(s *Server, c Conn, seq uint64) *session {
	sess := &session{
		srv:   s,
		conn:  c,
		log:   s.log,
		seq:   seq,
		since: time.Now().UTC(),
		calls: callQueue{max: s.opts.MaxConcurrentCalls, idle: make(chan struct{})},
		pend:  newPending(),
		peer:  peer{client: c.Client},
	}
	sess.out.init(c, sess.failWrite)
	sess.life.init()
	sess.fifo.init(4 * s.opts.QueueDepth)
	sess.nego.logLevel.Store(int32(tool.LevelWarning))
	return sess
}

func (s *session) run(ctx context.Context) error {
	defer s.life.cancelAll()
	defer s.hosted.end()
	if s.conn.Run != nil {
		// The transport chose the hosted server (Conn.Run): attached
		// before the first frame is read, as a hello would have.
		s.host(s.conn.Run, s.conn.Client.Cwd)
	}
	workerDone := make(chan struct{})
	go func() {
		defer close(workerDone)
		s.work()
	}()

	readDone := make(chan error, 1)
	go func() {
		err := s.read()
		close(s.fifo.queue) // the reader is the queue's only sender
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
		close(s.fifo.workerGone)
		s.calls.close()
		<-s.calls.idle
		close(end)
	}()
	go s.watch(ctx, end)

	select {
	case <-end:
	case <-s.life.hungUp:
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
	s.out.silence() // nothing is written once Serve has returned
	if why := s.life.gone(); why != nil {
		return why
	}
	select {
	case err := <-readDone:
		if err != nil && !errors.Is(err, io.EOF) && !s.life.draining.Load() {
			return err
		}
	default:
	}
	return nil
}

// read is the reader loop. It never blocks on a running request: it parses,
// answers cancellations at once, and then either queues the request (FIFO)
// or answers it itself or hands it to the call queue (concurrent).
func (s *session) read() error {
	src := s.source()
	defer src.Close()
	for {
		line, err := src.Read()
		if s.out.silenced.Load() {
			return nil
		}
		if !s.concurrent && (s.nego.initialized.Load() || s.nego.era == eraModern) && s.fifo.outstanding.Load() == 0 {
			// initialize has been answered (or the connection is modern)
			// and every reply before it is written: from now on nothing
			// depends on the order.
			s.concurrent = true
		}
		if errors.Is(err, frame.ErrTooLarge) {
			s.took(nil, nil, src.Offset())
			s.countRequest()
			s.answer([]byte(jsonrpc.TooLargeFrame), "")
			continue
		}
		if errors.Is(err, frame.ErrOverloaded) {
			s.took(nil, nil, src.Offset())
			s.countRequest()
			s.srv.overloads.Add(1)
			s.answer(s.daemonOverloaded(nil), "")
			continue
		}
		if err != nil {
			if h := s.hosted.get(); h != nil && errors.Is(err, io.EOF) {
				s.endHosted(h)
			}
			return err
		}
		msg, perr := jsonrpc.Parse(line)
		s.took(msg, line, src.Offset())
		if msg != nil && jsonrpc.IsInternal(msg.Method) && !s.conn.Shim {
			s.refuseInternal(msg)
			continue
		}
		if h := s.hosted.get(); h != nil {
			s.hostedFrame(h, msg, perr)
			continue
		}
		if perr != nil {
			s.countRequest()
			s.answer(jsonrpc.ErrorFrame(perr.ID, perr.Err), perr.ID.Key())
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

// refuseInternal answers an internal method ($/hearth/...) that came over a
// transport that may not send it (Conn.Shim): a request gets the refusal, a
// notification (which cannot be answered) is dropped and logged. Either way
// it has no effect: what a connection may ask follows from how it arrived.
func (s *session) refuseInternal(msg *jsonrpc.Message) {
	s.log.Warn("refused an internal method from a transport that may not send it",
		zap.String("method", msg.Method), zap.String("transport", s.conn.Transport))
	if msg.Kind != jsonrpc.Request {
		s.srv.errors.Add(1)
		return
	}
	s.countRequest()
	s.answer(jsonrpc.ErrorFrame(msg.ID, jsonrpc.InternalRefused(msg.Method)), msg.ID.Key())
}

// source is where the session reads its frames: the transport's own
// FrameSource, or NDJSON lines read from Conn.Reader.
func (s *session) source() FrameSource {
	if s.conn.Source != nil {
		return s.conn.Source
	}
	r := frame.NewReader(s.conn.Reader)
	// A line still being read draws on the daemon-wide budget beyond its
	// first frame.FreeLine bytes, with no exemption: every frame an idle
	// client ordinarily sends fits in FreeLine and is always read, while
	// partly sent megabyte lines from many connections cannot add up past
	// the bound (they are answered QUEUE_OVERLOADED).
	r.UseBudget(s.srv.held, nil)
	return r
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
// FIFO, or at once on a concurrent connection. re is the key of the request
// it answers ("" when the frame had no id).
func (s *session) answer(frame []byte, re string) {
	s.srv.errors.Add(1)
	if s.concurrent {
		s.out.write(frame, re)
		s.out.flush()
		return
	}
	s.fifo.push(&entry{key: re, answer: frame})
}

func newEntry(msg *jsonrpc.Message) *entry {
	return &entry{id: msg.ID, key: msg.ID.Key(), method: msg.Method, params: msg.Params, paramsDoc: msg.ParamsDoc(), size: int64(msg.Size())}
}

// request routes one request read from the connection.
func (s *session) request(msg *jsonrpc.Message) {
	key := msg.ID.Key()
	if refusal := s.peer.refusal(); refusal != nil && msg.Method != "ping" {
		s.answer(jsonrpc.ErrorFrame(msg.ID, &jsonrpc.Error{Code: codeWrongHome, Message: *refusal}), key)
		return
	}
	meta, refusal := s.eraOf(msg)
	if refusal != nil {
		s.answer(jsonrpc.ErrorFrame(msg.ID, refusal), key)
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
		s.fifo.push(e)
		return
	}
	if s.out.silenced.Load() {
		return
	}
	if s.isCall(msg.Method) {
		s.startCall(msg, meta)
		return
	}
	// A protocol method (or an unknown one): answered here and now.
	if s.life.draining.Load() {
		s.out.write(s.shuttingDown(msg.ID), key)
		s.out.flush()
		return
	}
	if s.pend.has(key) {
		s.answer(duplicateID(msg.ID), key)
		return
	}
	e := &entry{id: msg.ID, key: key, method: msg.Method, params: msg.Params, paramsDoc: msg.ParamsDoc(), meta: meta}
	if reply := s.dispatch(e); reply != nil {
		s.out.write(reply, key)
	}
	s.out.flush()
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
		s.out.write(refusal, e.key)
		s.out.flush()
		return
	}
	if s.submit(e) {
		return
	}
	// The session stopped taking calls meanwhile (a drain, or the peer is
	// gone): execute answers it without running it, or not at all.
	s.execute(e)
	s.out.flush()
}

// inlineMethods are answered from memory at once on a FIFO connection when
// nothing is ahead of them: handing them to the worker would cost a
// cross-thread wake-up that dominates their round trip.
var inlineMethods = map[string]bool{"ping": true, "initialize": true, "tools/list": true, "logging/setLevel": true, "server/discover": true}

// answerInline answers a cheap protocol request in the reader when nothing
// is outstanding on a FIFO connection, so the reply cannot overtake another.
func (s *session) answerInline(msg *jsonrpc.Message, meta *reqMeta) bool {
	if !inlineMethods[msg.Method] || s.fifo.outstanding.Load() != 0 || s.life.draining.Load() || s.out.silenced.Load() {
		return false
	}
	e := &entry{id: msg.ID, key: msg.ID.Key(), method: msg.Method, params: msg.Params, paramsDoc: msg.ParamsDoc(), meta: meta}
	if reply := s.dispatch(e); reply != nil {
		s.out.write(reply, e.key)
	}
	s.out.flush()
	return true
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
			s.cancelRequest(jsonrpc.RawID(p.RequestID).Key(), cancelSilently)
		}
	case "$/cancelRequest":
		var p struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(msg.Params, &p) == nil {
			s.cancelRequest(jsonrpc.RawID(p.ID).Key(), cancelWithReply)
		}
	case "$/hearth/tooLarge":
		// The shim read a line over the guard and discarded it; the client
		// must still get the payload_too_large reply (in its place on a FIFO
		// connection).
		s.countRequest()
		s.answer([]byte(jsonrpc.TooLargeFrame), "")
	case "notifications/initialized", "notifications/roots/list_changed":
		// Requests are served once initialize has been answered; what is
		// left is to learn the client's workspace.
		if s.nego.rootsCapable.Load() {
			s.requestRoots()
		}
	case "$/hearth/hello":
		s.hello(msg)
	default:
		// Unknown notifications are ignored, as JSON-RPC requires.
	}
}

func (s *session) cancelRequest(key string, mode int32) {
	if key == "" {
		return
	}
	e := s.pend.get(key)
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
			s.out.write(s.cancelledReply(e), e.key)
			s.out.flush()
		}
	}
}

// execute runs an admitted request and writes its reply (buffered; the
// caller flushes).
func (s *session) execute(e *entry) {
	reply := s.replyTo(e)
	s.release(e)
	if reply != nil {
		s.out.write(reply, e.key)
	}
}

func (s *session) replyTo(e *entry) []byte {
	if s.out.silenced.Load() {
		return nil
	}
	// A request cancelled before it started never starts.
	switch e.cancelMode.Load() {
	case cancelSilently:
		return nil
	case cancelWithReply:
		return s.cancelledReply(e)
	}
	if s.life.draining.Load() {
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
