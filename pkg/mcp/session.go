package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"path"
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
// response at all; seed 004's $/cancelRequest wants exactly one CANCELLED.
const (
	notCancelled int32 = iota
	cancelSilently
	cancelWithReply
)

// entry is one request in the session's FIFO.
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
	// queue overloaded, duplicate id, draining). Such an entry is not run; it
	// is written in its place in the order.
	answer []byte

	ctx        context.Context
	cancel     context.CancelFunc
	cancelMode atomic.Int32
}

type session struct {
	srv  *Server
	conn Conn
	w    *frame.Writer
	log  *zap.Logger

	queue       chan *entry
	pendingExec atomic.Int64 // entries queued or running that will execute
	heldBytes   atomic.Int64 // what those entries' messages hold (Message.Size)
	// outstanding counts entries queued, running, or not yet written. Only
	// the reader raises it, so when the reader sees zero, no reply is ahead
	// of the frame it holds and it may answer that frame itself.
	outstanding atomic.Int64

	mu       sync.Mutex
	inflight map[string]*entry
	client   tool.Client

	initialized atomic.Bool
	// rootsCapable: the client declared the roots capability, so the
	// session asks it for roots/list (its workspace folders).
	rootsCapable atomic.Bool
	rootsAsked   atomic.Int64
	rootsWait    chan struct{} // under mu: closed when the latest roots/list is answered
	logLevel     atomic.Int32
	draining     atomic.Bool
	writeFailed  atomic.Bool

	base      context.Context // parent of every call; cancelled when the session gives up
	cancelAll context.CancelFunc

	stop       chan struct{} // closed to make the worker finish early
	stopOnce   sync.Once
	workerGone chan struct{} // closed when the worker has ended
}

func newSession(s *Server, c Conn) *session {
	base, cancel := context.WithCancel(context.Background())
	sess := &session{
		srv:        s,
		conn:       c,
		w:          frame.NewWriter(c.Writer),
		log:        s.log,
		queue:      make(chan *entry, 4*s.opts.QueueDepth),
		inflight:   map[string]*entry{},
		client:     c.Client,
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
	go s.watchDrain(ctx, workerDone)

	readDone := make(chan error, 1)
	go func() {
		err := s.read()
		close(s.queue) // the reader is the queue's only sender
		readDone <- err
	}()
	// The worker ends when the queue is closed (input ended) or, on a drain or
	// a write failure, as soon as what was queued is answered. A reader still
	// blocked in Read (stdin cannot always be interrupted) is not waited for:
	// it holds nothing and ends with its transport.
	<-workerDone
	close(s.workerGone)
	if s.writeFailed.Load() {
		return ErrWriteFailed
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

// watchDrain turns ctx cancellation into a drain: stop reading, let the
// running call finish for at most the drain timeout, then cancel it.
func (s *session) watchDrain(ctx context.Context, workerDone <-chan struct{}) {
	select {
	case <-workerDone:
		return
	case <-ctx.Done():
	}
	s.draining.Store(true)
	s.stopReading()
	s.stopWork()
	t := time.NewTimer(s.srv.opts.DrainTimeout)
	defer t.Stop()
	select {
	case <-workerDone:
	case <-t.C:
		s.log.Warn("drain timeout: cancelling the call still running")
		s.cancelAll()
	}
}

func (s *session) stopReading() {
	if s.conn.CloseRead != nil {
		_ = s.conn.CloseRead()
	}
}

// read is the reader loop. It never blocks on a running request: it only
// parses, answers cancellations at once and queues everything else.
func (s *session) read() error {
	r := frame.NewReader(s.conn.Reader)
	for {
		line, err := r.Read()
		if errors.Is(err, frame.ErrTooLarge) {
			s.srv.requests.Add(1)
			s.enqueueAnswer([]byte(jsonrpc.TooLargeFrame))
			continue
		}
		if err != nil {
			return err
		}
		msg, perr := jsonrpc.Parse(line)
		if perr != nil {
			s.srv.requests.Add(1)
			s.enqueueAnswer(jsonrpc.ErrorFrame(perr.ID, perr.Err))
			continue
		}
		switch msg.Kind {
		case jsonrpc.Notification:
			s.notify(msg)
		case jsonrpc.Response:
			s.response(msg)
		case jsonrpc.Request:
			s.srv.requests.Add(1)
			if s.answerInline(msg) {
				continue
			}
			s.enqueue(msg)
		}
	}
}

func (s *session) enqueueAnswer(frame []byte) {
	s.srv.errors.Add(1)
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

// inlineMethods are answered from memory at once: handing them to the worker
// would cost a cross-thread wake-up that dominates their round trip.
var inlineMethods = map[string]bool{"ping": true, "initialize": true, "tools/list": true, "logging/setLevel": true}

// answerInline answers a cheap protocol request in the reader when nothing
// is outstanding on the connection, so the reply cannot overtake another.
func (s *session) answerInline(msg *jsonrpc.Message) bool {
	if !inlineMethods[msg.Method] || s.outstanding.Load() != 0 || s.draining.Load() || s.writeFailed.Load() {
		return false
	}
	e := &entry{id: msg.ID, key: msg.ID.Key(), method: msg.Method, params: msg.Params, paramsDoc: msg.ParamsDoc()}
	if reply := s.dispatch(e); reply != nil {
		s.write(reply)
	}
	s.flush()
	return true
}

func (s *session) enqueue(msg *jsonrpc.Message) {
	e := &entry{id: msg.ID, key: msg.ID.Key(), method: msg.Method, params: msg.Params, paramsDoc: msg.ParamsDoc(), size: int64(msg.Size())}
	if s.draining.Load() {
		e.answer = jsonrpc.ErrorFrame(e.id, &jsonrpc.Error{Code: jsonrpc.CodeShuttingDown, Message: "the daemon is shutting down; the request was not run and may be retried"})
		s.srv.errors.Add(1)
		s.push(e)
		return
	}
	if pending := s.pendingExec.Load(); pending >= int64(s.srv.opts.QueueDepth) ||
		(pending > 0 && s.heldBytes.Load()+e.size > s.srv.opts.QueueBytes) {
		e.params, e.paramsDoc = nil, nil // answered from here: hold nothing
		e.answer = s.overloaded(e)
		s.srv.errors.Add(1)
		s.push(e)
		return
	}
	s.mu.Lock()
	if _, dup := s.inflight[e.key]; dup {
		s.mu.Unlock()
		e.answer = jsonrpc.ErrorFrame(e.id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: a request with this id is still pending"})
		s.srv.errors.Add(1)
		s.push(e)
		return
	}
	e.ctx, e.cancel = context.WithCancel(s.base)
	s.inflight[e.key] = e
	s.mu.Unlock()
	s.heldBytes.Add(e.size)
	s.pendingExec.Add(1)
	s.push(e)
}

func (s *session) overloaded(e *entry) []byte {
	msg := "the connection's queue is full; retry later or send fewer requests at once"
	if e.method == "tools/call" {
		res, _ := toolResult((&tool.Error{Code: tool.QueueOverloaded, Message: msg}).Object(), true)
		return jsonrpc.ResultFrame(e.id, res)
	}
	return jsonrpc.ErrorFrame(e.id, &jsonrpc.Error{Code: jsonrpc.CodeOverloaded, Message: msg, Data: map[string]string{"code": string(tool.QueueOverloaded)}})
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
		// must still get the payload_too_large reply, in its place.
		s.srv.requests.Add(1)
		s.enqueueAnswer([]byte(jsonrpc.TooLargeFrame))
	case "notifications/initialized", "notifications/roots/list_changed":
		// Requests are served once initialize has been answered; what is
		// left is to learn the client's workspace.
		if s.rootsCapable.Load() {
			s.requestRoots()
		}
	case "$/hearth/hello":
		var p struct {
			Cwd     string `json:"cwd"`
			PID     int    `json:"pid"`
			Version string `json:"version"`
		}
		if json.Unmarshal(msg.Params, &p) == nil {
			s.mu.Lock()
			if p.Cwd != "" && p.Cwd[0] == '/' {
				s.client.Cwd = p.Cwd
			}
			if p.PID > 0 {
				s.client.PID = p.PID
			}
			s.mu.Unlock()
		}
	default:
		// Unknown notifications are ignored, as JSON-RPC requires.
	}
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
	e.cancelMode.CompareAndSwap(notCancelled, mode)
	e.cancel()
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
			// Draining or unable to write: answer what is already queued
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
	if len(s.queue) == 0 {
		s.flush()
	}
	s.outstanding.Add(-1) // after the write: the reader may now answer inline
}

func (s *session) execute(e *entry) {
	defer func() {
		s.mu.Lock()
		if s.inflight[e.key] == e {
			delete(s.inflight, e.key)
		}
		s.mu.Unlock()
		e.cancel()
		// The reply is all that is left to send: let the frame go.
		e.params, e.paramsDoc = nil, nil
		s.heldBytes.Add(-e.size)
		s.pendingExec.Add(-1)
	}()
	if s.writeFailed.Load() {
		return
	}
	// A queued request that was cancelled never starts.
	switch e.cancelMode.Load() {
	case cancelSilently:
		return
	case cancelWithReply:
		s.write(s.cancelledReply(e))
		return
	}
	if s.draining.Load() {
		s.srv.errors.Add(1)
		s.write(jsonrpc.ErrorFrame(e.id, &jsonrpc.Error{Code: jsonrpc.CodeShuttingDown, Message: "the daemon is shutting down; the request was not run and may be retried"}))
		return
	}
	if reply := s.dispatch(e); reply != nil {
		s.write(reply)
	}
}

func (s *session) cancelledReply(e *entry) []byte {
	s.srv.errors.Add(1)
	if e.method == "tools/call" {
		res, _ := toolResult((&tool.Error{Code: tool.Cancelled, Message: "the request was cancelled by the client"}).Object(), true)
		return jsonrpc.ResultFrame(e.id, res)
	}
	return jsonrpc.ErrorFrame(e.id, &jsonrpc.Error{Code: jsonrpc.CodeCancelled, Message: "Request cancelled"})
}

func (s *session) write(b []byte) {
	if s.writeFailed.Load() {
		return
	}
	if err := s.w.WriteRaw(b); err != nil {
		s.failWrite(err)
	}
}

func (s *session) flush() {
	if s.writeFailed.Load() {
		return
	}
	if err := s.w.Flush(); err != nil {
		s.failWrite(err)
	}
}

// failWrite ends the session: nobody is reading, so running work is cancelled
// and the reader is stopped.
func (s *session) failWrite(err error) {
	if s.writeFailed.Swap(true) {
		return
	}
	s.log.Info("client stopped reading; ending the session", zap.Error(err))
	s.cancelAll()
	s.stopReading()
	s.stopWork()
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
