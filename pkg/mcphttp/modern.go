package mcphttp

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/mcp"
)

// codeHeaderMismatch is the modern era's HeaderMismatch: the HTTP headers and
// the body disagree, or a header the body requires is missing.
const codeHeaderMismatch = -32020

// serveModern serves a 2026-07-28 POST: its headers are checked against the
// body, then a session of its own answers it and ends; the client closing
// the connection cancels it.
func (h *Handler) serveModern(p post, modern bool, version string, bad *jsonrpc.Error) {
	if p.msg.Kind != jsonrpc.Request {
		// Nothing in a stateless session waits for a notification (a
		// request is cancelled by closing its connection).
		p.w.WriteHeader(http.StatusAccepted)
		return
	}
	if e := checkModernHeaders(p.r.Header, p.msg, modern, version, bad); e != nil {
		refuseID(p.w, http.StatusBadRequest, p.msg.ID, e)
		return
	}
	if p.msg.Method == "initialize" {
		// Over HTTP the body's era decides: a modern initialize cannot
		// open a 2025 session.
		refuseID(p.w, http.StatusNotFound, p.msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
			Message: "Method not found: " + p.msg.Method + " is not part of protocol " + version + " (2025 clients initialize without _meta)"})
		return
	}
	src := &oneFrame{frame: p.body, msg: p.msg, replied: make(chan struct{}), stop: make(chan struct{})}
	sink := &postSink{p: p, replied: src.replied}
	conn := mcp.Conn{Source: src, Sink: sink, CloseRead: src.closeRead, Gone: p.r.Context().Done(), Transport: "http", Run: p.run}
	_ = h.opts.Serve(h.base, conn)
	sink.end()
}

// checkModernHeaders holds a modern request's headers against its body
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name), in the order the
// transport's rules give; nil when they agree.
func checkModernHeaders(hd http.Header, msg *jsonrpc.Message, modern bool, version string, bad *jsonrpc.Error) *jsonrpc.Error {
	hv := strings.TrimSpace(hd.Get("MCP-Protocol-Version"))
	mismatch := func(what string) *jsonrpc.Error {
		return &jsonrpc.Error{Code: codeHeaderMismatch, Message: "Bad Request: the request headers and body disagree: " + what}
	}
	if !modern {
		if msg.Method == "ping" {
			// ping carries no _meta; answered as on every endpoint
			// (docs/protocol.md), so that keep-alives work.
			return nil
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `Invalid params: MCP-Protocol-Version names ` + hv +
			`, whose requests carry "_meta" with "io.modelcontextprotocol/protocolVersion" and "io.modelcontextprotocol/clientCapabilities"`}
	}
	if hv != "" && version != "" && hv != version {
		return mismatch("MCP-Protocol-Version is " + clip(hv) + " but the body's _meta names " + clip(version))
	}
	mh, hasMethod := headerValue(hd, "Mcp-Method")
	if hasMethod && mh != msg.Method {
		return mismatch("Mcp-Method is " + clip(mh) + " but the body's method is " + clip(msg.Method))
	}
	if bad != nil {
		return bad
	}
	if hv == "" {
		return mismatch("the required MCP-Protocol-Version header is absent")
	}
	if !hasMethod {
		return mismatch("the required Mcp-Method header is absent")
	}
	field := nameField(msg.Method)
	if field == "" {
		return nil
	}
	bodyValue, inBody := paramString(msg.ParamsDoc(), field)
	nh, hasName := headerValue(hd, "Mcp-Name")
	if !hasName {
		if inBody {
			return mismatch("the body carries params." + field + " but the required Mcp-Name header is absent")
		}
		return nil
	}
	decoded, ok := decodeParamValue(nh)
	if !ok {
		return mismatch("the Mcp-Name header carries an invalid Base64 value")
	}
	if inBody && decoded != bodyValue {
		return mismatch("Mcp-Name is " + clip(decoded) + " but the body's params." + field + " is " + clip(bodyValue))
	}
	return nil
}

// headerValue is a header's value without the whitespace around it.
func headerValue(hd http.Header, name string) (string, bool) {
	vs := hd.Values(name)
	if len(vs) == 0 {
		return "", false
	}
	return strings.Trim(vs[0], " \t"), true
}

// nameField is the params member Mcp-Name mirrors for a method ("": none).
func nameField(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	}
	return ""
}

func paramString(d *jsonval.Doc, field string) (string, bool) {
	if d == nil || d.Root().Kind() != jsonval.Object {
		return "", false
	}
	n := d.Get(d.Root(), field)
	if n == nil || n.Kind() != jsonval.String {
		return "", false
	}
	return d.Str(n), true
}

// decodeParamValue reads a header value that may be Base64 in the form
// =?base64?...?= (for values a header cannot carry as they are).
func decodeParamValue(v string) (string, bool) {
	const pre, post = "=?base64?", "?="
	if !strings.HasPrefix(v, pre) || !strings.HasSuffix(v, post) || len(v) < len(pre)+len(post) {
		return v, true
	}
	b, err := base64.StdEncoding.Strict().DecodeString(v[len(pre) : len(v)-len(post)])
	if err != nil {
		return "", false
	}
	return string(b), true
}

// oneFrame is the FrameSource of a modern POST's session: the body, then
// the end of input once the reply is sent (a subscription's stream stays
// open until then).
type oneFrame struct {
	frame    []byte
	msg      *jsonrpc.Message // the body as the POST decoded it (MessageSource)
	read     bool
	replied  chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
}

func (o *oneFrame) ReadMessage() (*jsonrpc.Message, []byte, error) {
	if !o.read {
		o.read = true
		return o.msg, o.frame, nil
	}
	select {
	case <-o.replied:
	case <-o.stop:
	}
	return nil, nil, io.EOF
}

func (o *oneFrame) Read() ([]byte, error) {
	_, b, err := o.ReadMessage()
	return b, err
}

func (o *oneFrame) Offset() int64 { return int64(len(o.frame)) }
func (o *oneFrame) Close()        {}

func (o *oneFrame) closeRead() error {
	o.stopOnce.Do(func() { close(o.stop) })
	return nil
}

// postSink is the FrameSink of a modern POST's session: the reply alone as
// JSON, or an SSE stream when something comes before it (progress, log
// messages, a subscription's notifications) and the client takes SSE.
type postSink struct {
	p       post
	replied chan struct{}

	mu      sync.Mutex
	sse     *sseWriter
	done    bool
	written bool
}

func (s *postSink) Send(b []byte, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil
	}
	final := false
	if e, ok := envelope.Scan(b); ok && e.Kind() == envelope.Response {
		final = true
	}
	if s.sse == nil && final && (s.p.json || !s.p.sse) {
		s.done, s.written = true, true
		close(s.replied)
		w := s.p.w
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(replyStatus(b))
		_, err := w.Write(b)
		return err
	}
	if s.sse == nil {
		if !s.p.sse {
			return nil // notifications have nowhere to go on a JSON reply
		}
		s.sse = startSSE(s.p.w, nil)
		s.written = true
	}
	s.sse.event("", b)
	if final {
		s.done = true
		close(s.replied)
		return s.sse.flush()
	}
	return nil
}

func (s *postSink) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sse != nil {
		return s.sse.flush()
	}
	return nil
}

// end answers a request the session let go without a reply (a
// notifications/cancelled of its own cannot reach it, so this is a drain
// or a hang-up).
func (s *postSink) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.written {
		s.done, s.written = true, true
		refuseID(s.p.w, http.StatusServiceUnavailable, s.p.msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeShuttingDown,
			Message: "the request was not answered: the daemon is shutting down; retry later"})
	} else if s.sse != nil {
		_ = s.sse.flush()
	}
	s.done = true
}

// replyStatus is the HTTP status of a modern reply sent as JSON: errors of
// the request's form (not of its work) have their own.
func replyStatus(b []byte) int {
	code, ok := errorCode(b)
	if !ok {
		return http.StatusOK
	}
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, codeHeaderMismatch, -32021, -32022:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// errorCode reads an error reply's code.
func errorCode(b []byte) (int, bool) {
	msg, perr := jsonrpc.Parse(b)
	if perr != nil || msg.Kind != jsonrpc.Response || len(msg.Error) == 0 {
		return 0, false
	}
	var e struct {
		Code int `json:"code"`
	}
	if json.Unmarshal(msg.Error, &e) != nil {
		return 0, false
	}
	return e.Code, true
}

// clip shortens what a client sent for an error message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
