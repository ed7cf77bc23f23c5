package hosted

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hearth-mcp/hearth/pkg/hosted/route"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/mcp"
)

// Session is one client connection of a hosted server: the dispatcher of
// its mcp session (mcp.Dispatcher), which hands each frame the session
// read to the router of the instance it is bound to (docs/architecture.md,
// "The session in parts").
//
// Which instance that is depends on the client's shape (route.Shape: what
// its initialize declares), so a session is bound when the client says it:
// at its initialize, or at its first request with 2026-07-28 _meta. A later
// initialize of another shape (a client that probed with server/discover
// and fell back) binds it again (docs/decisions/0056-client-shape.md).
type Session struct {
	t         *Table
	spec      Spec
	clientDir string
	conn      uint64
	tag       string
	w         route.Peer
	gone      func(error)

	// mu guards what follows: Handle binds on the session's reader, while
	// Status, Drain and Detach come from other goroutines. Lock order:
	// mu, then the table's, then an instance's (and its router's).
	mu    sync.Mutex
	inst  *Instance
	c     *route.Client
	shape string
	ended bool
	// gate is the gate the session passed (gate.go; nil: none), set by
	// its reader before it binds, let go of by Detach.
	gate *gate

	draining atomic.Bool
	done     chan struct{}
	doneOnce sync.Once
}

var _ mcp.Dispatcher = (*Session)(nil)

// A session's writer is what the router writes a client's frames with.
var _ route.Peer = mcp.Writer(nil)

// Attach attaches a client to spec for its directory and connection: the
// instance is chosen (created, its upstream started on the first request
// that needs it) when the client's first frame says its shape. The
// client's frames go to peer; gone is called if the client is given up.
// tag names the client across daemons (its shim's pid; "" for none): one
// that a drain detached gets back what it had set on the upstream.
func (t *Table) Attach(spec Spec, clientDir string, conn uint64, tag string, peer route.Peer, gone func(error)) (*Session, error) {
	if err := spec.CheckPlace(clientDir); err != nil {
		return nil, err
	}
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	return &Session{t: t, spec: spec, clientDir: clientDir, conn: conn, tag: tag, w: peer, gone: gone, done: make(chan struct{})}, nil
}

// Handle routes one frame the client sent, as the session decoded it: msg,
// or perr when it is not JSON-RPC. A frame that says the client's shape
// binds the session first.
func (s *Session) Handle(msg *jsonrpc.Message, perr *jsonrpc.ParseError) {
	c := s.client()
	// Only a session not bound yet, or an initialize, can say a shape: the
	// other frames of a bound session go on at once.
	if perr == nil && msg.Kind == jsonrpc.Request && (c == nil || msg.Method == "initialize") {
		if shape, ok := route.ShapeOf(msg); ok {
			if c == nil && !s.passed() {
				if err := s.pass(msg); err != nil {
					_ = s.w.Write(jsonrpc.ResponseFrame(msg.ID, nil, (&jsonrpc.Error{Code: route.CodeUpstream, Message: err.Error()}).JSON()), msg.ID.Key())
					return
				}
			}
			if err := s.bind(shape, msg.Method == "initialize"); err != nil {
				_ = s.w.Write(jsonrpc.ResponseFrame(msg.ID, nil, (&jsonrpc.Error{Code: route.CodeUpstream, Message: err.Error()}).JSON()), msg.ID.Key())
				return
			}
			c = s.client()
		}
	}
	if c != nil {
		c.HandleParsed(msg, perr)
		return
	}
	// Before the client said who it is: nothing reaches a server.
	switch {
	case perr != nil:
		_ = s.w.Write(jsonrpc.ErrorFrame(perr.ID, perr.Err), "")
	case msg.Kind != jsonrpc.Request:
		// a notification or answer before initialize: no server to tell
	case msg.Method == "ping":
		_ = s.w.Write(jsonrpc.ResponseFrame(msg.ID, []byte(`{}`), nil), msg.ID.Key())
	default:
		_ = s.w.Write(jsonrpc.ResponseFrame(msg.ID, nil, (&jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: send initialize first"}).JSON()), msg.ID.Key())
	}
}

// bind attaches the session to the instance of its spec, scope and shape
// (Table.pick), unless it is bound already: only an initialize of another
// shape moves it, detaching it from the instance it leaves.
func (s *Session) bind(shape string, initialize bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.c != nil && (!initialize || shape == s.shape) {
		return nil
	}
	in, err := s.t.pick(s.spec, s.clientDir, s.conn, shape)
	if err != nil {
		return err
	}
	s.shape = shape
	if in == s.inst {
		return nil // a 2026-07-28 upstream serves every shape
	}
	old, oldC := s.inst, s.c
	s.inst, s.c = in, in.r.Attach(s.w, s.gone)
	s.c.Resume(s.tag)
	if entry := s.spec.Entry; entry != "" {
		in.named(entry)
	}
	if oldC != nil {
		oldC.Detach()
		old.detached()
	}
	return nil
}

// client is the router's client the session is bound to (nil: none yet).
func (s *Session) client() *route.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c
}

// Answer sends the client a reply its session decided (a frame too large,
// an internal method refused). The session's writer takes it from any
// goroutine.
func (s *Session) Answer(frame []byte, re string) { _ = s.w.Write(frame, re) }

// EndInput serves the end of the client's input. The client closing its
// input ends what it asked of the server: a server spawned directly would
// die with its stdin, so each request still in flight is answered now with
// an error and cancelled upstream (route.Client.EndInput), while the
// client stays attached, so the answers reach it (hearth's own sessions
// instead answer every request read before the end: docs/architecture.md,
// "Hosted servers"). A drain is no client's doing: nothing is cancelled
// then.
func (s *Session) EndInput(err error) {
	if c := s.client(); c != nil && errors.Is(err, io.EOF) && !s.draining.Load() {
		c.EndInput(inputClosedMessage)
	}
	if s.draining.Load() && !errors.Is(err, io.EOF) {
		return // the drain's end of input: Drain decides when the session ends
	}
	s.finish()
}

// inputClosedMessage answers a hosted client's requests cancelled because
// its input ended.
const inputClosedMessage = "cancelled: the client closed its input"

// Drain: the daemon stops. The session ends once the upstream has answered
// what the client has in flight, or after the table's DrainWait; Detach
// then cancels upstream what is still in flight (its answer is lost, and
// the shim owes the client -32004: docs/decisions/0046-upstream-handover.md).
func (s *Session) Drain() {
	s.draining.Store(true)
	wait := s.t.drainWait
	c := s.client()
	if wait <= 0 || c == nil {
		s.finish()
		return
	}
	t := time.AfterFunc(wait, s.finish)
	c.WhenSettled(func() {
		t.Stop()
		s.finish()
	})
}

// HangUp: the client is gone.
func (s *Session) HangUp() { s.finish() }

// Done is closed once the session may end (EndInput, Drain or HangUp).
func (s *Session) Done() <-chan struct{} { return s.done }

func (s *Session) finish() { s.doneOnce.Do(func() { close(s.done) }) }

// Status names the hosted server, and who the client said it is in what
// the router decoded (its initialize, or a modern probe).
func (s *Session) Status(ci *mcp.ClientInfo) {
	ci.Hosted, ci.HostedKey = s.Label(), s.Instance()
	if pid, err := strconv.Atoi(strings.TrimPrefix(s.tag, "shim:")); err == nil {
		ci.ShimPID = pid
	}
	c := s.client()
	if c == nil {
		return
	}
	id, ok := c.Identity()
	if !ok {
		return
	}
	ci.ProtocolVersion = id.ProtocolVersion
	if !id.Modern || id.Name != "" {
		ci.Name, ci.Version = id.Name, id.Version
	}
}

// Detach ends the client's attachment: what it still has in flight is
// cancelled upstream. The instance may stop after its idle timeout.
//
// A drain's detach parks instead (route.Client.Park): the client's
// subscriptions and log level are kept for its return, to this daemon's
// successor after a hand-over (docs/decisions/0046-upstream-handover.md).
func (s *Session) Detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.ended = true
	s.finish() // a client waiting at a gate waits no more
	defer s.t.leave(s)
	if s.c == nil {
		return
	}
	if s.draining.Load() {
		s.c.Park()
	} else {
		s.c.Detach()
	}
	s.inst.detached()
}

// passed: the session passed its gate, or has none to pass.
func (s *Session) passed() bool {
	if !s.spec.gated() {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gate != nil
}

// pass waits at the server's gate (gate.go) until the session's turn; the
// session's lock is not held meanwhile, so status and Detach go on.
func (s *Session) pass(msg *jsonrpc.Message) error {
	g, err := s.t.admit(s, s.who(msg))
	if err != nil {
		return err
	}
	s.mu.Lock()
	ended := s.ended
	if !ended {
		s.gate = g
	}
	s.mu.Unlock()
	if ended {
		s.t.gates.mu.Lock()
		g.release(s.gateUnit())
		s.t.gates.mu.Unlock()
		return errors.New("the client left")
	}
	return nil
}

// who words the client for a gate's holder: the name its first request
// gives (its initialize's clientInfo, a 2026-07-28 request's _meta) and
// its shim's pid.
func (s *Session) who(msg *jsonrpc.Message) string {
	var p struct {
		ClientInfo struct{ Name string } `json:"clientInfo"`
		Meta       struct {
			ClientInfo struct{ Name string } `json:"io.modelcontextprotocol/clientInfo"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	name := p.ClientInfo.Name
	if name == "" {
		name = p.Meta.ClientInfo.Name
	}
	if name == "" {
		name = "a client"
	}
	if pid, ok := strings.CutPrefix(s.tag, "shim:"); ok {
		return name + " (shim pid " + pid + ")"
	}
	return name
}

// Instance is the key of the instance the session is bound to ("": none
// yet).
func (s *Session) Instance() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inst == nil {
		return ""
	}
	return s.inst.key
}

// Label names the hosted server.
func (s *Session) Label() string { return s.spec.Label() }

// Pending is how many of the client's requests are unanswered.
func (s *Session) Pending() int {
	if c := s.client(); c != nil {
		return c.Pending()
	}
	return 0
}

// pick is the instance a client of spec in clientDir on connection conn
// whose shape is shape is served by: the base's 2026-07-28 instance when
// it has one, else the instance of the whole key, created (and seeded from
// its catalog entry) when there is none. The instance counts the client
// as attached.
func (t *Table) pick(spec Spec, clientDir string, conn uint64, shape string) (*Instance, error) {
	scope := spec.Scope(clientDir, conn)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, ErrClosed
	}
	in := t.modernOf(spec.Key(scope, ""))
	if in != nil {
		in.mu.Lock()
		gone := in.gone
		in.mu.Unlock()
		if gone {
			in = nil // leaving the table: a new instance serves
		}
	}
	if in == nil {
		key := spec.Key(scope, shape)
		if in = t.inst[key]; in == nil {
			in = t.newInstance(spec, key, scope, clientDir, shape)
			t.inst[key] = in
			in.fromCatalog()
		}
	}
	in.attached()
	return in, nil
}

// modernOf is the base's 2026-07-28 instance, if one is in the table.
func (t *Table) modernOf(base string) *Instance {
	t.modernMu.Lock()
	defer t.modernMu.Unlock()
	return t.modern[base]
}

// speaksModern records that in's upstream speaks 2026-07-28, so that every
// client of its base is served by it (unless another instance of the base
// already is). The router calls it with its lock held (Ready), the catalog
// and an adoption with the table's: modernMu is taken last.
func (t *Table) speaksModern(in *Instance) {
	t.modernMu.Lock()
	defer t.modernMu.Unlock()
	if t.modern[in.base] == nil {
		t.modern[in.base] = in
	}
}

// forgetModern drops in as its base's 2026-07-28 instance (it left the
// table).
func (t *Table) forgetModern(in *Instance) {
	t.modernMu.Lock()
	defer t.modernMu.Unlock()
	if t.modern[in.base] == in {
		delete(t.modern, in.base)
	}
}
