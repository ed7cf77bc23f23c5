package mcp

import (
	"context"
	"encoding/json"
	"sync/atomic"

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

	// after runs once the request's reply is written and flushed (a
	// control method's ThenReply), nil for most.
	after func()
}

// registry is the dispatcher of hearth's own tools: the session's frames
// are served from the tool registry (docs/architecture.md, "The session in
// parts"). It starts as a FIFO: a worker runs the requests one at a time
// and replies leave in request order, which is what a plain JSON-RPC client
// gets for the whole connection. Once the connection is initialized and
// nothing read before is still unanswered, it turns concurrent for good:
// the reader answers protocol methods itself and each tool call runs in its
// own goroutine, at most MaxConcurrentCalls at once (docs/protocol.md,
// decision 0013).
//
// Its state lives in parts, each owning its own and guarding it itself:
//
//   - fifo: the FIFO queue and its worker (fifo.go); calls: the concurrent
//     connection's call slots (calls.go);
//   - pend: the requests in flight and the open subscriptions, and what
//     they hold (pending.go);
//   - nego: the era, initialization, log level and roots negotiated with
//     the client (negotiate.go).
//
// It writes, ends and learns who the client is through the session's
// transport parts (out, life, peer), which it reaches through session.
type registry struct {
	*session

	fifo  fifo
	calls callQueue
	pend  pending
	nego  negotiation

	// concurrent is the reader's own: set once the connection is
	// initialized (or modern) and the FIFO is empty, never cleared.
	concurrent bool

	running atomic.Int64 // handlers running now (ClientInfo)
	done    chan struct{}
}

func newRegistry(s *session) *registry {
	r := &registry{
		session: s,
		calls:   callQueue{max: s.srv.opts.MaxConcurrentCalls, idle: make(chan struct{})},
		pend:    newPending(),
		done:    make(chan struct{}),
	}
	r.fifo.init(4 * s.srv.opts.QueueDepth)
	r.nego.logLevel.Store(int32(tool.LevelWarning))
	return r
}

// start runs the FIFO's worker. The registry is done once the worker has
// ended (the input ended, or on a drain or a hang-up as soon as what was
// queued is answered) and every call has ended: then no more calls are
// taken.
func (s *registry) start() {
	go func() {
		s.work()
		close(s.fifo.workerGone)
		s.calls.close()
		<-s.calls.idle
		close(s.done)
	}()
}

// Handle routes one frame the reader decoded: it never blocks on a running
// request. It answers cancellations at once, and then either queues the
// request (FIFO) or answers it itself or hands it to the call queue
// (concurrent).
func (s *registry) Handle(msg *jsonrpc.Message, perr *jsonrpc.ParseError) {
	s.settle()
	if perr != nil {
		s.countRequest()
		s.answer(jsonrpc.ErrorFrame(perr.ID, perr.Err), perr.ID.Key())
		return
	}
	switch msg.Kind {
	case jsonrpc.Notification:
		s.notify(msg)
	case jsonrpc.Response:
		s.response(msg)
	case jsonrpc.Request:
		s.request(msg)
	}
}

// settle turns the connection concurrent once initialize has been answered
// (or the connection is modern) and every reply before it is written: from
// then on nothing depends on the order. The reader calls it before it acts
// on each frame.
func (s *registry) settle() {
	if !s.concurrent && (s.nego.initialized.Load() || s.nego.era == eraModern) && s.fifo.outstanding.Load() == 0 {
		s.concurrent = true
	}
}

// Answer sends an error reply the session decided for a frame: in its place
// in the FIFO, or at once on a concurrent connection. re is the key of the
// request it answers ("" when the frame had no id).
func (s *registry) Answer(frame []byte, re string) {
	s.settle()
	s.reply(frame, re)
}

// answer is a reply of the registry's own deciding, counted as an error.
func (s *registry) answer(frame []byte, re string) {
	s.srv.errors.Add(1)
	s.reply(frame, re)
}

func (s *registry) reply(frame []byte, re string) {
	if s.concurrent {
		s.out.write(frame, re)
		s.out.flush()
		return
	}
	s.fifo.push(&entry{key: re, answer: frame})
}

// EndInput closes the FIFO (the reader is its queue's only sender): every
// request read is still answered.
func (s *registry) EndInput(error) { close(s.fifo.queue) }

// Drain stops taking calls: subscriptions end, calls waiting for a slot are
// refused now, running ones are left to finish (the session bounds them).
func (s *registry) Drain() {
	// Subscriptions end first, while the session is surely still running:
	// once the worker stops, Serve may return and the transport close
	// before a later write.
	s.endSubscriptions()
	s.fifo.stopWork()
	waiting := s.calls.closeAndTake()
	for _, e := range waiting {
		s.execute(e) // draining: answered without running
	}
	if len(waiting) > 0 {
		s.out.flush()
	}
}

// HangUp: nobody is there to answer. Waiting calls never start; running
// ones see their context cancelled (the session's lifecycle).
func (s *registry) HangUp() {
	s.fifo.stopWork()
	for _, e := range s.calls.closeAndTake() {
		s.release(e)
	}
}

func (s *registry) Done() <-chan struct{} { return s.done }

// Detach: the registry holds nothing once it is done.
func (s *registry) Detach() {}

// Status fills in the calls running and waiting.
func (s *registry) Status(ci *ClientInfo) {
	_, waiting := s.calls.counts()
	ci.Running = int(s.running.Load())
	ci.Waiting = waiting
}

func newEntry(msg *jsonrpc.Message) *entry {
	return &entry{id: msg.ID, key: msg.ID.Key(), method: msg.Method, params: msg.Params, paramsDoc: msg.ParamsDoc(), size: int64(msg.Size())}
}

// request routes one request read from the connection.
func (s *registry) request(msg *jsonrpc.Message) {
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
	if e.after != nil {
		e.after()
	}
}

// isCall reports whether a method runs a tool: tools/call, or a tool served
// as a plain method.
func (s *registry) isCall(method string) bool {
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
func (s *registry) startCall(msg *jsonrpc.Message, meta *reqMeta) {
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
func (s *registry) answerInline(msg *jsonrpc.Message, meta *reqMeta) bool {
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
func (s *registry) notify(msg *jsonrpc.Message) {
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
	case "notifications/initialized", "notifications/roots/list_changed":
		// Requests are served once initialize has been answered; what is
		// left is to learn the client's workspace.
		if s.nego.rootsCapable.Load() {
			s.requestRoots()
		}
	default:
		// Unknown notifications are ignored, as JSON-RPC requires.
	}
}

func (s *registry) cancelRequest(key string, mode int32) {
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
func (s *registry) execute(e *entry) {
	reply := s.replyTo(e)
	s.release(e)
	if reply != nil {
		s.out.write(reply, e.key)
	}
	if e.after != nil {
		s.out.flush()
		e.after()
	}
}

func (s *registry) replyTo(e *entry) []byte {
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

func (s *registry) cancelledReply(e *entry) []byte {
	s.srv.errors.Add(1)
	if e.method == "tools/call" {
		res, _ := toolResult((&tool.Error{Code: tool.Cancelled, Message: "the request was cancelled by the client"}).Object(), true)
		return s.ok(e, res)
	}
	return jsonrpc.ErrorFrame(e.id, &jsonrpc.Error{Code: jsonrpc.CodeCancelled, Message: "Request cancelled"})
}
