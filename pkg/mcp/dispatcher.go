package mcp

import (
	"encoding/json"
	"errors"
	"sync"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// Dispatcher decides what a session's frames mean. A session is its
// transport parts (reader, tracker, outbox, lifecycle, peer) and one
// dispatcher: the registry of hearth's own tools (registry.go), or a hosted
// server's (pkg/hosted's Session, attached through Options.Host). The
// session chooses it once: at its start when the transport chose a hosted
// server (Conn.Run), else the registry, which a shim's hello asking for a
// hosted server replaces (docs/architecture.md, "The session in parts").
//
// The session calls Handle, Answer and EndInput from its reader alone, one
// at a time; Drain, HangUp, Status and Detach come from other goroutines.
type Dispatcher interface {
	// Handle serves one frame the client sent, as the session decoded it
	// (once: docs/decisions/0011): msg, or perr when the frame is not
	// JSON-RPC. The session has screened it: internal methods arrive only
	// from a shim (Conn.Shim), and the shim's own notifications are the
	// session's.
	Handle(msg *jsonrpc.Message, perr *jsonrpc.ParseError)
	// Answer sends a reply the session decided for a frame it did not hand
	// on (too large, over a memory bound, an internal method refused), in
	// the frame's place when the dispatcher keeps an order. re is the key
	// (jsonrpc.ID.Key) of the request it answers, "" for none.
	Answer(frame []byte, re string)
	// EndInput: no more frames come. err says why: io.EOF when the client
	// closed its input, errDrained when a drain closed it, another error
	// when reading failed.
	EndInput(err error)
	// Drain: the daemon stops; the session stops reading after it.
	Drain()
	// HangUp: the client is gone; nothing more can be written.
	HangUp()
	// Done is closed once the dispatcher has served what it was handed
	// (after EndInput, Drain or HangUp): the session ends then.
	Done() <-chan struct{}
	// Detach: the session has ended; what the dispatcher still holds for
	// the client is released.
	Detach()
	// Status fills in what the dispatcher knows of the connection: the
	// calls it runs, the server it is attached to, who the client said it
	// is when the dispatcher decoded that (its initialize).
	Status(ci *ClientInfo)
}

// Writer sends a peer its frames (without their newline). re labels a
// frame with the key (jsonrpc.ID.Key) of the client's request it belongs
// to, "" for none; it becomes the frame's FrameSink label, so that
// Streamable HTTP sends a hosted server's progress, log messages and
// requests on the stream of the request they are about (docs/protocol.md,
// "Hosted servers over HTTP"). A session's Writer (the one a hosted
// dispatcher is given) may be called from several goroutines at once.
type Writer interface {
	// Write sends a frame, waiting for the peer to make room if need be.
	Write(frame []byte, re string) error
	// TryWrite sends a frame only if the peer can take it now without
	// waiting (Conn.WriteReady), and says whether it did. A peer that
	// cannot tell always says false: its frames are then written by Write.
	TryWrite(frame []byte, re string) (bool, error)
}

// HostRequest is what a connection asks to be attached to: the hosted
// server a shim's hello names, or the transport chose (Conn.Run).
type HostRequest struct {
	// Run is the hello's "run" member as the shim sent it
	// (docs/protocol.md, "Hosted servers").
	Run json.RawMessage
	// Cwd is the client's directory ("" when unknown); Conn the
	// connection's number, unique in the daemon's life.
	Cwd  string
	Conn uint64
	// ShimPID is the pid of the shim that asked ($/hearth/hello), 0 when
	// the transport chose the server: it names the client across a
	// daemon's hand-over (docs/decisions/0046-upstream-handover.md).
	ShimPID int
}

// HostFunc attaches a connection to the hosted server req names and
// returns its dispatcher. w sends the client frames; gone ends the session
// (the hosted side gave the client up). An error is given to each of the
// client's requests.
type HostFunc func(req HostRequest, w Writer, gone func(error)) (Dispatcher, error)

// sessionWriter is a session's Writer.
type sessionWriter struct {
	s     *session
	ready func(n int) bool
}

func (w sessionWriter) Write(f []byte, re string) error {
	w.s.out.write(f, re)
	w.s.out.flush()
	if w.s.out.silenced.Load() {
		return ErrWriteFailed
	}
	return nil
}

func (w sessionWriter) TryWrite(f []byte, re string) (bool, error) {
	if w.ready == nil || !w.ready(len(f)+1) {
		return false, nil
	}
	return true, w.Write(f, re)
}

// errNoHosting is the refusal of a daemon that hosts no servers.
var errNoHosting = errors.New("this hearth daemon does not host servers (hearth run needs a daemon of the same version)")

// host makes the hosted server run names the session's dispatcher; the
// registry, if the session started with it, then ends once what it was
// handed is answered.
func (s *session) host(run []byte, cwd string, shimPID int) {
	w := sessionWriter{s: s, ready: s.conn.WriteReady}
	var d Dispatcher
	var err error
	if s.srv.opts.Host == nil {
		err = errNoHosting
	} else {
		d, err = s.srv.opts.Host(HostRequest{Run: run, Cwd: cwd, Conn: s.seq, ShimPID: shimPID}, w, func(error) { s.hangUp(ErrWriteFailed) })
	}
	if err != nil {
		s.log.Info("refused a hosted server")
		d = newRefused(err, w.Write)
	}
	s.dmu.Lock()
	if s.ended {
		s.dmu.Unlock()
		d.Detach()
		return
	}
	s.hosted = d
	s.dmu.Unlock()
	// A drain or a hang-up that came first holds for it too.
	if s.life.gone() != nil {
		d.HangUp()
	} else if s.life.draining.Load() {
		d.Drain()
	}
	if s.cur != nil {
		s.cur.EndInput(errSwitched)
	}
	s.cur = d
}

// errSwitched ends the registry's input when a hello hands the connection
// to a hosted server.
var errSwitched = errors.New("mcp: the connection went to a hosted server")

// hostedDispatcher is the hosted server's dispatcher (nil: none).
func (s *session) hostedDispatcher() Dispatcher {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	return s.hosted
}

// dispatchers are the session's dispatchers: the registry, a hosted
// server's, or the one and then the other.
func (s *session) dispatchers() []Dispatcher {
	var ds []Dispatcher
	if s.reg != nil {
		ds = append(ds, s.reg)
	}
	if h := s.hostedDispatcher(); h != nil {
		ds = append(ds, h)
	}
	return ds
}

// detach releases the dispatchers once the session has ended.
func (s *session) detach() {
	s.dmu.Lock()
	s.ended = true
	s.dmu.Unlock()
	for _, d := range s.dispatchers() {
		d.Detach()
	}
}

// refused is the dispatcher of a connection whose hosted server could not
// be attached (an unknown name, a daemon that does not host): it answers
// every request with why.
type refused struct {
	err      error
	write    func(frame []byte, re string) error
	done     chan struct{}
	doneOnce sync.Once
}

func newRefused(err error, write func([]byte, string) error) *refused {
	return &refused{err: err, write: write, done: make(chan struct{})}
}

func (r *refused) Handle(msg *jsonrpc.Message, perr *jsonrpc.ParseError) {
	if perr != nil {
		r.write(jsonrpc.ErrorFrame(perr.ID, perr.Err), "")
		return
	}
	if msg.Kind != jsonrpc.Request {
		return
	}
	if msg.Method == "ping" {
		r.write(jsonrpc.ResultFrame(msg.ID, []byte(`{}`)), msg.ID.Key())
		return
	}
	r.write(jsonrpc.ErrorFrame(msg.ID, &jsonrpc.Error{Code: CodeHostedRefused, Message: "hearth run: " + r.err.Error()}), msg.ID.Key())
}

func (r *refused) Answer(frame []byte, re string) { r.write(frame, re) }
func (r *refused) EndInput(error)                 { r.finish() }
func (r *refused) Drain()                         { r.finish() }
func (r *refused) HangUp()                        { r.finish() }
func (r *refused) Done() <-chan struct{}          { return r.done }
func (r *refused) Detach()                        {}
func (r *refused) Status(*ClientInfo)             {}
func (r *refused) finish()                        { r.doneOnce.Do(func() { close(r.done) }) }

// CodeHostedRefused answers the requests of a client whose hosted server
// could not be attached.
const CodeHostedRefused = -32010
