package mcp

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/hello"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// A session serves one connection. It is the connection's transport parts
// and one dispatcher (docs/architecture.md, "The session in parts"):
//
//   - the reader loop: it reads each frame (from the transport's
//     FrameSource, decoded once), tells the tracker of it, refuses an
//     internal method from a transport that may not send it, takes the
//     shim's own notifications, and hands every other frame to the
//     dispatcher;
//   - out: where frames go (the transport's FrameSink) and whether anything
//     may still be written (outbox.go);
//   - life: drain and hang-up, and the context every call derives from
//     (hangup.go);
//   - peer (identity): who the client is, for tools and for status (identity.go);
//   - the dispatcher, which decides what each frame means (dispatcher.go):
//     the registry of hearth's own tools (registry.go), or a hosted server
//     (Options.Host), chosen once, at the start (Conn.Run) or by the shim's
//     hello.
type session struct {
	srv   *Server
	conn  Conn
	log   *zap.Logger
	seq   uint64    // the session's number, to order Clients
	since time.Time // UTC

	out  outbox
	life lifecycle
	peer identity

	// reg is the registry dispatcher, nil when the transport chose a
	// hosted server (Conn.Run). The session starts with it unless then.
	reg *registry
	// cur is the dispatcher frames go to now: the reader's own.
	cur Dispatcher
	// hosted is the dispatcher of a hosted server once one is chosen (nil:
	// none); ended: the session has ended, and none may be attached.
	dmu    sync.Mutex
	hosted Dispatcher
	ended  bool

	requests atomic.Uint64

	// surf is the connection's surface (surface), decided on its first
	// frame; shimOpened: that frame was a shim's hello, not yet taken
	// (the reader's alone).
	surf       atomic.Uint32
	shimOpened bool
}

func newSession(s *Server, c Conn, seq uint64) *session {
	sess := &session{
		srv:   s,
		conn:  c,
		log:   s.log,
		seq:   seq,
		since: time.Now().UTC(),
		peer:  identity{client: c.Client},
	}
	sess.out.init(c, sess.failWrite)
	sess.life.init()
	if c.Run == nil {
		sess.reg = newRegistry(sess)
		sess.cur = sess.reg
	}
	return sess
}

func (s *session) run(ctx context.Context) error {
	defer s.life.cancelAll()
	defer s.detach()
	if s.conn.Run != nil {
		// The transport chose the hosted server (Conn.Run): attached
		// before the first frame is read, as a hello would have.
		s.host(s.conn.Run, s.conn.Client.Cwd, 0)
	} else {
		s.reg.start()
	}

	readDone := make(chan error, 1)
	go func() {
		err := s.read()
		why := err
		if s.life.draining.Load() {
			why = errDrained
		}
		s.cur.EndInput(why)
		readDone <- err
	}()

	// The session ends once its dispatchers are done: the registry when its
	// input ended or, on a drain or when the peer is gone, as soon as what
	// was queued is answered and every call has ended; a hosted server's
	// once the client's input ended or at a drain or hang-up. A reader
	// still blocked in Read, as stdin cannot always be interrupted, holds
	// nothing and ends with its transport.
	end := make(chan struct{})
	go func() {
		if s.reg != nil {
			<-s.reg.Done()
		}
		if h := s.hostedDispatcher(); h != nil {
			<-h.Done()
		}
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

// errDrained is the end of input a drain caused (the session closed the
// transport's read side): no doing of the client's.
var errDrained = errors.New("mcp: the session is draining")

// read is the reader loop. It never blocks on a running request: it reads
// and decodes each frame once, and hands it to the dispatcher.
func (s *session) read() error {
	src := s.source()
	defer src.Close()
	parsed, _ := src.(MessageSource)
	for {
		var msg *jsonrpc.Message
		var line []byte
		var err error
		if parsed != nil {
			msg, line, err = parsed.ReadMessage()
		} else {
			line, err = src.Read()
		}
		if s.out.silenced.Load() {
			return nil
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
			s.answer(daemonOverloadedLine(), "")
			continue
		}
		if err != nil {
			return err
		}
		var perr *jsonrpc.ParseError
		if msg == nil {
			msg, perr = jsonrpc.Parse(line)
		}
		s.took(msg, line, src.Offset())
		if s.surface() == undecided {
			s.decide(msg)
		}
		if msg != nil && jsonrpc.IsInternal(msg.Method) && s.internal(msg) {
			continue
		}
		if msg != nil && msg.Kind == jsonrpc.Request {
			s.countRequest()
		}
		s.cur.Handle(msg, perr)
	}
}

// surface is what a connection is, and so which of hearth's internal
// methods ($/hearth/...) it may send: decided once, by how it arrived
// (Conn.Shim, Conn.Transport) and by its first frame, and never changed by
// anything its client sends after (docs/threat-model.md).
type surface uint32

const (
	undecided surface = iota
	// mcpClient: an MCP client's own connection (a stdio daemon's client,
	// Streamable HTTP): no internal method at all.
	mcpClient
	// ownClient: a client of the daemon's own socket that did not open
	// with a shim's hello: the user's own command (hearthd status,
	// servers, restart). It may send the control methods (Options.Control)
	// and no other internal method.
	ownClient
	// shimRelay: a socket connection a shim opened with its hello, then
	// its client's frames, relayed: the hello is taken, and of what
	// follows only the shim's own $/hearth/tooLarge. Its client's frames
	// reach no internal method, a second hello included.
	shimRelay
	// shimDirect: the stdio a shim handed over, whose input opens with the
	// shim's hello: the hello is taken, and nothing internal after it
	// (the daemon reads the client's lines itself, so none is the shim's).
	shimDirect
)

// decide fixes the connection's surface from how it arrived and its first
// frame (msg; nil when that did not parse).
func (s *session) decide(msg *jsonrpc.Message) {
	sf := ownClient
	switch {
	case !s.conn.Shim:
		sf = mcpClient
	case s.conn.Transport == "direct":
		sf = shimDirect
	case msg != nil && msg.Kind == jsonrpc.Notification && msg.Method == hello.Method:
		sf = shimRelay
	case s.conn.Transport != "socket":
		sf = mcpClient
	}
	s.surf.Store(uint32(sf))
	if sf == shimRelay || sf == shimDirect {
		s.shimOpened = msg != nil && msg.Method == hello.Method
	}
}

// surface is the connection's, once decided.
func (s *session) surface() surface { return surface(s.surf.Load()) }

// internal deals with an internal method ($/hearth/...) by the
// connection's surface: the shim's opening hello and a relaying shim's
// tooLarge are taken, a control method of the socket's own client goes on
// to the registry (it reports false then), and everything else is refused.
func (s *session) internal(msg *jsonrpc.Message) bool {
	sf := s.surface()
	switch {
	case s.shimOpened && msg.Method == hello.Method && msg.Kind == jsonrpc.Notification:
		// The opening frame; never again on this connection.
		s.shimOpened = false
		if s.hostedDispatcher() == nil {
			s.hello(msg)
		}
		return true
	case sf == shimRelay && msg.Method == "$/hearth/tooLarge" && msg.Kind == jsonrpc.Notification:
		// The shim read a line over the guard and discarded it; the client
		// must still get the payload_too_large reply (in its place on a FIFO
		// connection).
		s.countRequest()
		s.answer([]byte(jsonrpc.TooLargeFrame), "")
		return true
	case sf == ownClient && msg.Kind == jsonrpc.Request && s.srv.opts.Control[msg.Method] != nil:
		return false
	}
	s.refuseInternal(msg)
	return true
}

// refuseInternal answers an internal method ($/hearth/...) that this
// connection may not send (its surface): a request gets the refusal, a
// notification (which cannot be answered) is dropped and logged. Either way
// it has no effect: what a connection may ask follows from how it arrived.
func (s *session) refuseInternal(msg *jsonrpc.Message) {
	s.log.Warn("refused an internal method this connection may not send",
		zap.String("method", msg.Method), zap.String("transport", s.transport()))
	if msg.Kind != jsonrpc.Request {
		s.srv.errors.Add(1)
		return
	}
	s.countRequest()
	s.answer(jsonrpc.ErrorFrame(msg.ID, jsonrpc.InternalRefused(msg.Method)), msg.ID.Key())
}

// answer sends an error reply the reader decided, through the dispatcher
// (in its place on a FIFO connection). re is the key of the request it
// answers ("" when the frame had no id).
func (s *session) answer(frame []byte, re string) {
	s.srv.errors.Add(1)
	s.cur.Answer(frame, re)
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
	if s.conn.Tracker == nil {
		return
	}
	if msg == nil {
		s.conn.Tracker.Took(0, jsonrpc.ID{}, "", nil, line, end)
		return
	}
	s.conn.Tracker.Took(msg.Kind, msg.ID, msg.Method, msg.Params, line, end)
}

func (s *session) countRequest() {
	s.srv.requests.Add(1)
	s.requests.Add(1)
}
