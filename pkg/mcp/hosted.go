package mcp

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// A hosted session is a connection whose shim asked, in its
// $/hearth/hello, for a server hearth hosts (`hearth run`): from then on
// its frames never reach the registry. The session keeps reading, tracking
// (Conn.Tracker) and writing frames as for any connection, and hands each
// frame to the instance's router through Options.Host (docs/architecture.md,
// "Hosted servers").

// HostRequest is what a shim's hello asks to be connected to.
type HostRequest struct {
	// Run is the hello's "run" member as the shim sent it
	// (docs/protocol.md, "Hosted servers").
	Run json.RawMessage
	// Cwd is the client's directory ("" when unknown); Conn the
	// connection's number, unique in the daemon's life.
	Cwd  string
	Conn uint64
}

// Hosted is one connection attached to a hosted server.
type Hosted interface {
	// Handle routes one frame the client sent, as the session decoded it
	// (once: docs/decisions/0011): msg, or perr when the frame is not
	// JSON-RPC (the hosted side answers it).
	Handle(msg *jsonrpc.Message, perr *jsonrpc.ParseError)
	// Pending is how many of the client's requests are unanswered.
	Pending() int
	// Detach ends the attachment: what the client still has in flight is
	// cancelled upstream.
	Detach()
	// EndInput: the client's input ended. What it still has in flight is
	// answered with an error saying reason and cancelled upstream; the
	// attachment stays, so the answers reach the client.
	EndInput(reason string)
	// Label names the hosted server, for status.
	Label() string
}

// HostFunc attaches a connection to the hosted server req names. w sends
// the client frames; gone ends the session (the router gave the client
// up). An error is given to each of the client's requests.
type HostFunc func(req HostRequest, w HostWriter, gone func(error)) (Hosted, error)

// HostWriter sends a hosted session's client its frames (without their
// newline), one call at a time. re labels a frame with the key
// (jsonrpc.ID.Key) of the client's request it belongs to, "" for none; it
// becomes the frame's FrameSink label, so that Streamable HTTP sends a
// hosted server's progress, log messages and requests on the stream of
// the request they are about (docs/protocol.md, "Hosted servers over
// HTTP").
type HostWriter interface {
	// Write sends a frame, waiting for the client to make room if need be.
	Write(frame []byte, re string) error
	// TryWrite sends a frame only if the client can take it now without
	// waiting (Conn.WriteReady), and says whether it did.
	TryWrite(frame []byte, re string) (bool, error)
}

// hostWriter is a session's HostWriter.
type hostWriter struct {
	s     *session
	ready func(n int) bool
}

func (w hostWriter) Write(f []byte, re string) error {
	w.s.out.write(f, re)
	w.s.out.flush()
	if w.s.out.silenced.Load() {
		return ErrWriteFailed
	}
	return nil
}

func (w hostWriter) TryWrite(f []byte, re string) (bool, error) {
	if w.ready == nil || !w.ready(len(f)+1) {
		return false, nil
	}
	return true, w.Write(f, re)
}

// errNoHosting is the refusal of a daemon that hosts no servers.
var errNoHosting = errors.New("this hearth daemon does not host servers (hearth run needs a daemon of the same version)")

// hostedPart is the session's attachment to a hosted server (nil: none).
type hostedPart struct {
	mu     sync.Mutex
	h      Hosted
	detach sync.Once
}

func (p *hostedPart) get() Hosted {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.h
}

func (p *hostedPart) set(h Hosted) {
	p.mu.Lock()
	p.h = h
	p.mu.Unlock()
}

// end detaches the session, once, when it ends.
func (p *hostedPart) end() {
	if h := p.get(); h != nil {
		p.detach.Do(h.Detach)
	}
}

// host attaches the session to the hosted server its hello asks for.
func (s *session) host(run json.RawMessage, cwd string) {
	w := hostWriter{s: s, ready: s.conn.WriteReady}
	var h Hosted
	var err error
	if s.srv.opts.Host == nil {
		err = errNoHosting
	} else {
		h, err = s.srv.opts.Host(HostRequest{Run: run, Cwd: cwd, Conn: s.seq}, w, func(error) { s.hangUp(ErrWriteFailed) })
	}
	if err != nil {
		s.log.Info("refused a hosted server")
		h = &refusedHost{err: err, write: w.Write}
	}
	s.hosted.set(h)
}

// hostedFrame routes a frame of a hosted session: the shim's own
// notifications are the session's, everything else the router's.
func (s *session) hostedFrame(h Hosted, msg *jsonrpc.Message, perr *jsonrpc.ParseError) {
	if msg != nil && msg.Kind == jsonrpc.Notification && strings.HasPrefix(msg.Method, "$/hearth/") {
		if msg.Method == "$/hearth/tooLarge" {
			s.countRequest()
			s.answer([]byte(jsonrpc.TooLargeFrame), "")
		}
		return
	}
	if msg != nil && msg.Kind == jsonrpc.Request {
		s.countRequest()
		switch msg.Method {
		case "initialize":
			// Who the client is, for status; the router answers it.
			var p initializeParams
			if json.Unmarshal(msg.Params, &p) == nil {
				s.peer.identify(p.ClientInfo.Name, p.ClientInfo.Version, p.ProtocolVersion, false)
			}
		case "server/discover":
			// A probing client says who it is in _meta; it stays so unless
			// it falls back to initialize.
			var p struct {
				Meta struct {
					Version string `json:"io.modelcontextprotocol/protocolVersion"`
					Info    struct {
						Name    string `json:"name"`
						Version string `json:"version"`
					} `json:"io.modelcontextprotocol/clientInfo"`
				} `json:"_meta"`
			}
			if json.Unmarshal(msg.Params, &p) == nil && p.Meta.Version != "" {
				s.peer.identify(p.Meta.Info.Name, p.Meta.Info.Version, p.Meta.Version, true)
			}
		}
	}
	h.Handle(msg, perr)
}

// endHosted serves the end of a hosted client's input. The client closing
// its input ends what it asked of the server: a server spawned directly
// would die with its stdin, so each request still in flight is cancelled
// upstream and answered with an error (hearth's own sessions instead answer
// every request read before the end: docs/architecture.md, "Hosted
// servers"). A drain is no client's doing: what is in flight then is let
// finish, bounded by the drain timeout. Either way the session waits until
// every request is answered.
func (s *session) endHosted(h Hosted) {
	if !s.life.draining.Load() {
		h.EndInput(inputClosedMessage)
	}
	deadline := time.Now().Add(s.srv.opts.DrainTimeout)
	for h.Pending() > 0 && time.Now().Before(deadline) {
		select {
		case <-s.life.hungUp:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// inputClosedMessage answers a hosted client's requests cancelled because
// its input ended.
const inputClosedMessage = "cancelled: the client closed its input"

// refusedHost answers every request with why the hosted server could not
// be attached (an unknown name, a daemon that does not host).
type refusedHost struct {
	err   error
	write func(frame []byte, re string) error
}

func (r *refusedHost) Handle(msg *jsonrpc.Message, perr *jsonrpc.ParseError) {
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

func (r *refusedHost) Pending() int    { return 0 }
func (r *refusedHost) Detach()         {}
func (r *refusedHost) EndInput(string) {}
func (r *refusedHost) Label() string   { return "" }

// CodeHostedRefused answers the requests of a client whose hosted server
// could not be attached.
const CodeHostedRefused = -32010
