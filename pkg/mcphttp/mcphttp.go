// Package mcphttp serves MCP sessions over Streamable HTTP on the loopback
// interface: the transport only. It checks each HTTP request (Host, Origin,
// the bearer token, method, headers, body), turns the body into a frame for
// a session and routes every frame the session sends back to the HTTP
// response it belongs to, through mcp.Conn's FrameSource and FrameSink
// (docs/architecture.md, "The session in parts").
//
// Both eras share one endpoint (docs/protocol.md, "Streamable HTTP"):
//
//   - 2025-11-25: initialize opens a session named by the Mcp-Session-Id
//     the reply carries; later POSTs name it, GET opens the server's own
//     stream, DELETE ends it. Every SSE event has an id, so a stream cut off
//     is resumed with GET and Last-Event-ID.
//   - 2026-07-28: every POST carries its own _meta and is served by a
//     session of its own that ends with its reply; the client dropping the
//     connection cancels it. MCP-Protocol-Version, Mcp-Method and Mcp-Name
//     must agree with the body.
package mcphttp

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/sessionkeep"
	"github.com/hearth-mcp/hearth/pkg/webguard"
)

// ServeFunc serves one MCP connection until it ends: mcp.Server.Serve, or
// any other kind of session offering the same method.
type ServeFunc func(ctx context.Context, c mcp.Conn) error

// Defaults for Options.
const (
	// DefaultMaxSessions bounds the 2025 sessions open at once: each holds
	// a session's goroutines and its streams' recent events.
	DefaultMaxSessions = 256
	// DefaultSessionIdle ends a 2025 session nobody has used (no request, no
	// open stream) for this long: a client that vanished without DELETE.
	DefaultSessionIdle = 30 * time.Minute
	// DefaultBodyTimeout bounds how long a POST's body may take to
	// arrive: a client that announces a body and sends it slowly, or never,
	// holds a connection and what it sent until then.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultMaxReplay bounds the bytes of events a 2025 session keeps for
	// clients that resume its streams.
	DefaultMaxReplay = 8 << 20
)

// Options configure a Handler.
type Options struct {
	Serve ServeFunc
	// Token is the bearer token every request must carry
	// (Authorization: Bearer TOKEN). Empty: no authentication (http_auth =
	// "none").
	Token string
	Log   *zap.Logger
	// MaxBody bounds a POST's body (frame.MaxLine when zero), the same 1 MiB
	// guard as a line on the socket.
	MaxBody     int64
	MaxSessions int
	SessionIdle time.Duration
	// Budget, when set, is the daemon-wide budget bodies being read draw
	// on (mcp.Server.HeldBudget): beyond its first frame.FreeLine bytes a
	// body's buffer is taken from it as the bytes arrive, so many large
	// uploads at once are answered 503 rather than held.
	Budget *frame.Budget
	// BodyTimeout bounds how long a POST's body may take to arrive
	// (DefaultBodyTimeout when zero): a body still incomplete then is
	// answered 408 and what it held is given back.
	BodyTimeout time.Duration
	// MaxReplay bounds the bytes of events each 2025 session keeps for
	// resumption (DefaultMaxReplay when zero): past it the oldest finished
	// streams are dropped first.
	MaxReplay int64
	// Replay, when set, is the budget every session's kept events draw on
	// (a share of the daemon-wide budget, frame.Budget.Share): when it is
	// spent, sessions keep only what is still to be delivered.
	Replay *frame.Budget
	// Hosted, when set, gives the hosted server a new session is attached
	// to, from the request's path (mcp.Conn.Run): a hosted server's
	// endpoint (/servers/NAME/mcp) names a server of the config file, as
	// `hearth run NAME` does. The client never names what runs. An error
	// is a 404 that says why.
	Hosted func(path string) (json.RawMessage, error)
	// Keep, when set, keeps a record of every 2025 session (what it
	// negotiated) so a daemon started later takes it back under the same
	// Mcp-Session-Id (see keep.go). Records are removed when the session
	// is deleted or expires, and kept when the handler closes (a restart).
	Keep *sessionkeep.Dir
}

// Handler is the /mcp endpoint.
type Handler struct {
	opts Options
	log  *zap.Logger

	// base is every session's context: Close cancels it, and the sessions
	// drain as they do on the socket.
	base   context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	sessions  map[string]*legacySession
	restoring map[string]chan struct{} // sessions being taken back, by id
	closed    bool
	wg        sync.WaitGroup // sessions' Serve goroutines

	replayHeld atomic.Int64 // bytes the sessions keep for resumption
}

// New returns a Handler.
func New(opts Options) *Handler {
	if opts.MaxBody <= 0 {
		opts.MaxBody = frame.MaxLine
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = DefaultSessionIdle
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	if opts.MaxReplay <= 0 {
		opts.MaxReplay = DefaultMaxReplay
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	h := &Handler{opts: opts, log: opts.Log, sessions: map[string]*legacySession{}, restoring: map[string]chan struct{}{}}
	h.base, h.cancel = context.WithCancel(context.Background())
	go h.expire()
	return h
}

// Close drains every session (as a daemon shutdown drains the socket's) and
// waits for them to end.
func (h *Handler) Close() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
}

// ReplayBytes is what the 2025 sessions keep now for clients that resume
// their streams (each at most Options.MaxReplay, beyond events still to be
// written).
func (h *Handler) ReplayBytes() int64 { return h.replayHeld.Load() }

// Sessions counts the 2025 sessions open now.
func (h *Handler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if why := webguard.CheckHost(r.Host); why != "" {
		refuse(w, http.StatusForbidden, jsonrpc.CodeInvalidRequest, "Forbidden: "+why)
		return
	}
	if why := webguard.CheckOrigin(r.Header.Values("Origin")); why != "" {
		refuse(w, http.StatusForbidden, jsonrpc.CodeInvalidRequest, "Forbidden: "+why)
		return
	}
	if h.opts.Token != "" && !bearerOK(r.Header.Get("Authorization"), h.opts.Token) {
		// 401 and nothing else: not even whether the rest was well formed.
		w.Header().Set("WWW-Authenticate", `Bearer realm="hearth"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		refuse(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest, "Method Not Allowed: the MCP endpoint takes POST (messages), GET (a 2025 session's stream) and DELETE (end a 2025 session)")
	}
}

// bearerOK compares the Authorization header's token in constant time.
func bearerOK(header, token string) bool {
	const prefix = "bearer "
	if len(header) < len(prefix) || !strings.EqualFold(header[:len(prefix)], prefix) {
		return false
	}
	got := strings.TrimSpace(header[len(prefix):])
	return subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

// refuse answers an HTTP request the transport turns down with a JSON-RPC
// error (id null) that says why.
func refuse(w http.ResponseWriter, status, code int, msg string) {
	refuseID(w, status, jsonrpc.ID{}, &jsonrpc.Error{Code: code, Message: msg})
}

func refuseID(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(jsonrpc.ErrorFrame(id, e))
}

// post takes one JSON-RPC message.
func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	if ct := mediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		refuse(w, http.StatusUnsupportedMediaType, jsonrpc.CodeInvalidRequest, "Unsupported Media Type: the body must be one JSON-RPC message, Content-Type: application/json")
		return
	}
	sse, json := accepts(r.Header.Values("Accept"))
	if !sse && !json {
		refuse(w, http.StatusNotAcceptable, jsonrpc.CodeInvalidRequest, "Not Acceptable: Accept must include application/json or text/event-stream")
		return
	}
	body, err := h.readBody(w, r)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.Is(err, errBodyOverloaded):
		refuse(w, http.StatusServiceUnavailable, jsonrpc.CodeOverloaded,
			"the daemon holds as many unanswered requests as it may; retry later")
		return
	case errors.Is(err, errBodyTimeout):
		// The connection is closed after this answer: what is left of the
		// body cannot be told from the next request.
		w.Header().Set("Connection", "close")
		refuse(w, http.StatusRequestTimeout, jsonrpc.CodeInvalidRequest,
			"Request Timeout: the body did not arrive whole within "+h.opts.BodyTimeout.String()+"; send it again")
		return
	case errors.As(err, &tooLarge):
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = w.Write([]byte(jsonrpc.TooLargeFrame))
		return
	case err != nil:
		refuse(w, http.StatusBadRequest, jsonrpc.CodeParseError, "Bad Request: the body could not be read whole ("+err.Error()+")")
		return
	}
	msg, perr := jsonrpc.Parse(body)
	if perr != nil {
		refuseID(w, http.StatusBadRequest, perr.ID, perr.Err)
		return
	}
	if jsonrpc.IsInternal(msg.Method) {
		// hearth's internal methods come from its shim over the socket
		// alone; the session would refuse them too (mcp.Conn.Shim), but a
		// notification can only be refused here, where it has a reply.
		refuseID(w, http.StatusForbidden, msg.ID, jsonrpc.InternalRefused(msg.Method))
		return
	}
	p := post{w: w, r: r, body: body, msg: msg, sse: sse, json: json}
	if h.opts.Hosted != nil {
		if p.run, err = h.opts.Hosted(r.URL.Path); err != nil {
			refuseID(w, http.StatusNotFound, msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Not Found: " + err.Error()})
			return
		}
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		h.postToSession(p, id)
		return
	}
	modern, version, bad := mcp.ModernEnvelope(msg)
	headerVersion := strings.TrimSpace(r.Header.Get("MCP-Protocol-Version"))
	switch {
	case modern || isModernVersion(headerVersion):
		h.serveModern(p, modern, version, bad)
	case msg.Kind == jsonrpc.Request && msg.Method == "initialize":
		h.openSession(p)
	case msg.Kind != jsonrpc.Request:
		// A notification or response outside any session has nobody to
		// go to: accepted and dropped, as a stateless server does.
		w.WriteHeader(http.StatusAccepted)
	default:
		refuseID(w, http.StatusBadRequest, msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "Bad Request: no Mcp-Session-Id: send initialize first (a 2025 session), or carry _meta " +
				`"io.modelcontextprotocol/protocolVersion" (2026-07-28) in every request`})
	}
}

// post is one POST being served.
type post struct {
	w         http.ResponseWriter
	r         *http.Request
	body      []byte
	msg       *jsonrpc.Message
	sse, json bool            // what the client accepts
	run       json.RawMessage // the hosted server a new session is for (Options.Hosted)
}

// mediaType is a Content-Type's type/subtype, lower case.
func mediaType(v string) string {
	if i := strings.IndexByte(v, ';'); i >= 0 {
		v = v[:i]
	}
	return strings.ToLower(strings.TrimSpace(v))
}

// accepts reads Accept: whether SSE and JSON replies are acceptable. No
// Accept at all takes either.
func accepts(values []string) (sse, json bool) {
	if len(values) == 0 {
		return true, true
	}
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			switch mediaType(part) {
			case "text/event-stream":
				sse = true
			case "application/json":
				json = true
			case "*/*", "application/*":
				json = true
			case "text/*":
				sse = true
			}
		}
	}
	return sse, json
}

func isModernVersion(v string) bool {
	for _, m := range mcp.ModernVersions {
		if v == m {
			return true
		}
	}
	return false
}
