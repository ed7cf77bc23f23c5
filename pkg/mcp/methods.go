package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// dispatch runs one request and returns its reply frame (nil: no reply).
func (s *registry) dispatch(e *entry) []byte {
	entryTool, plain := s.plainMethod(e.method)
	if e.meta == nil && !s.nego.initialized.Load() && e.method != "initialize" && e.method != "ping" && !plain {
		return s.fail(e, jsonrpc.CodeInvalidRequest, "Invalid Request: the session is not initialized; send initialize first, "+
			"or server/discover and requests carrying _meta "+strconv.Quote(metaProtocolVersion), nil)
	}
	switch e.method {
	case "initialize":
		return s.initialize(e)
	case "ping":
		if s.nego.modern.Load() {
			return jsonrpc.ResultFrame(e.id, s.modernResult([]byte("{}"), false))
		}
		return jsonrpc.ResultFrame(e.id, []byte("{}"))
	case "server/discover":
		if e.meta != nil {
			return s.discover(e)
		}
	case "tools/list":
		return s.listTools(e)
	case "tools/call":
		return s.callTool(e)
	case "logging/setLevel":
		if e.meta != nil {
			return s.fail(e, jsonrpc.CodeMethodNotFound, "Method not found: logging/setLevel is not part of protocol "+e.meta.version+
				"; set _meta "+strconv.Quote(metaLogLevel)+" on each request that should send log messages", nil)
		}
		return s.setLevel(e)
	case "resources/list", "resources/read", "resources/templates/list":
		if len(s.srv.opts.Registry.ResourceProviders()) > 0 {
			return s.resources(e)
		}
	}
	if plain {
		return s.callPlain(e, entryTool)
	}
	if fn, ok := s.controlFor(e.method); ok {
		return s.control(e, fn)
	}
	name := e.method
	if len(name) > 64 {
		name = name[:64] + "…"
	}
	return s.fail(e, jsonrpc.CodeMethodNotFound, "Method not found: "+strconv.Quote(name), nil)
}

func (s *registry) plainMethod(method string) (*tool.Entry, bool) {
	if s.srv.opts.Registry == nil {
		return nil, false
	}
	t, ok := s.srv.opts.Registry.Lookup(method)
	if !ok || !t.PlainMethod {
		return nil, false
	}
	return t, true
}

func (s *registry) fail(e *entry, code int, msg string, data any) []byte {
	s.srv.errors.Add(1)
	return jsonrpc.ErrorFrame(e.id, &jsonrpc.Error{Code: code, Message: msg, Data: data})
}

func (s *registry) result(e *entry, v any) []byte {
	b, err := frame.Marshal(v)
	if err != nil {
		return s.fail(e, jsonrpc.CodeInternalError, "Internal error: result did not marshal", nil)
	}
	return s.ok(e, b)
}

// decodeParams decodes params (absent: zero value) and reports -32602 on failure.
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		return nil
	}
	if params[0] != '{' {
		return fmt.Errorf("params must be an object")
	}
	return json.Unmarshal(params, v)
}

// initializeParams is what a session reads of initialize's params: who the
// client is, and whether it offers roots.
type initializeParams struct {
	ProtocolVersion string `json:"protocolVersion"`
	ClientInfo      struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
	Capabilities struct {
		Roots json.RawMessage `json:"roots"`
	} `json:"capabilities"`
}

func (s *registry) initialize(e *entry) []byte {
	var p initializeParams
	if err := decodeParams(e.params, &p); err != nil {
		return s.fail(e, jsonrpc.CodeInvalidParams, "Invalid params: "+err.Error(), nil)
	}
	if s.nego.initialized.Load() {
		return s.fail(e, jsonrpc.CodeInvalidRequest, "Invalid Request: initialize was already received on this connection", nil)
	}
	version := ProtocolVersions[0]
	if slices.Contains(ProtocolVersions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	s.peer.identify(p.ClientInfo.Name, p.ClientInfo.Version, version, false)
	s.nego.rootsCapable.Store(len(p.Capabilities.Roots) > 0 && string(p.Capabilities.Roots) != "null")
	s.nego.initialized.Store(true)
	type info struct {
		Name    string `json:"name"`
		Title   string `json:"title,omitempty"`
		Version string `json:"version"`
	}
	return s.result(e, map[string]any{
		"protocolVersion": version,
		"capabilities":    s.srv.capabilities(),
		"serverInfo":      info{Name: s.srv.opts.Name, Title: "hearth", Version: s.srv.opts.Version},
		"instructions":    s.srv.opts.Instructions,
	})
}

// Cursors are opaque to clients; inside they are "o:<offset>".
func encodeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(offset)))
}

func decodeCursor(c string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !bytes.HasPrefix(b, []byte("o:")) {
		return 0, false
	}
	n, err := strconv.Atoi(string(b[2:]))
	return n, err == nil && n >= 0
}

func (s *registry) listTools(e *entry) []byte {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := decodeParams(e.params, &p); err != nil {
		return s.fail(e, jsonrpc.CodeInvalidParams, "Invalid params: "+err.Error(), nil)
	}
	all := s.srv.opts.Registry.List()
	offset := 0
	if p.Cursor != nil {
		n, ok := decodeCursor(*p.Cursor)
		if !ok || n > len(all) {
			return s.fail(e, jsonrpc.CodeInvalidParams, "Invalid params: unknown cursor", nil)
		}
		offset = n
	}
	end := min(offset+s.srv.opts.PageSize, len(all))
	defs := make([]tool.Definition, 0, end-offset)
	for _, t := range all[offset:end] {
		defs = append(defs, t.Definition())
	}
	res := map[string]any{"tools": defs}
	if end < len(all) {
		res["nextCursor"] = encodeCursor(end)
	}
	return s.result(e, res)
}

func (s *registry) setLevel(e *entry) []byte {
	var p struct {
		Level string `json:"level"`
	}
	if err := decodeParams(e.params, &p); err != nil {
		return s.fail(e, jsonrpc.CodeInvalidParams, "Invalid params: "+err.Error(), nil)
	}
	lvl, ok := tool.ParseLevel(p.Level)
	if !ok {
		return s.fail(e, jsonrpc.CodeInvalidParams, "Invalid params: level must be one of debug, info, notice, warning, error, critical, alert, emergency", nil)
	}
	s.nego.logLevel.Store(int32(lvl))
	return jsonrpc.ResultFrame(e.id, []byte("{}"))
}

// outcome is what became of a handler.
type outcome struct {
	value     any
	err       error
	panicked  bool
	panicVal  any
	stack     []byte
	abandoned bool
	timeout   time.Duration // the call's limit, for TOOL_TIMEOUT's timeoutMs
}

// invoke runs a handler under the call's timeout, turning a panic into an
// outcome and not waiting past the abandon grace for a handler that ignores
// its context.
func (s *registry) invoke(e *entry, t *tool.Entry, args tool.Args, client tool.Client, rep *reporter) (outcome, context.Context) {
	// Replies buffered ahead of this call (pipelined on a FIFO connection)
	// must not wait for it.
	s.out.flush()
	s.running.Add(1)
	defer s.running.Add(-1)
	timeout := t.CallTimeout(args.Raw)
	ctx, cancel := context.WithTimeout(e.ctx, timeout)
	defer cancel()
	if e.meta == nil {
		s.awaitRoots(ctx)
		client = s.clientInfo()
	}
	call := tool.NewCall(t.Name, args.Raw, args.Doc, client, rep)
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- outcome{panicked: true, panicVal: r, stack: debug.Stack()}
			}
		}()
		v, err := t.Handler(ctx, call)
		done <- outcome{value: v, err: err}
	}()
	select {
	case o := <-done:
		o.timeout = timeout
		return o, ctx
	case <-ctx.Done():
	}
	grace := time.NewTimer(s.srv.opts.AbandonGrace)
	defer grace.Stop()
	select {
	case o := <-done:
		o.timeout = timeout
		return o, ctx
	case <-grace.C:
		s.log.Warn("tool did not return after cancellation; answering without it",
			zap.String("tool", t.Name), zap.Duration("grace", s.srv.opts.AbandonGrace))
		return outcome{err: ctx.Err(), abandoned: true, timeout: timeout}, ctx
	}
}

// toolCall is tools/call's params.
type toolCall struct {
	Name          string
	Arguments     *jsonval.Doc // nil: absent or null
	ProgressToken json.RawMessage
}

// readToolCall reads tools/call's params from the decoded frame (nil: no
// params), leaving the arguments where the frame's decode put them: they
// are most of a call, and decoding them again would cost more than the tool.
func readToolCall(d *jsonval.Doc) (toolCall, error) {
	var c toolCall
	if d == nil {
		return c, nil
	}
	root := d.Root()
	if root.Kind() != jsonval.Object {
		return c, fmt.Errorf("params must be an object")
	}
	if n := d.Get(root, "name"); n != nil && n.Kind() != jsonval.Null {
		if n.Kind() != jsonval.String {
			return c, fmt.Errorf(`"name" must be a string`)
		}
		c.Name = d.Str(n)
	}
	if n := d.Get(root, "arguments"); n != nil && n.Kind() != jsonval.Null {
		c.Arguments = d.Sub(n)
	}
	if meta := d.Get(root, "_meta"); meta != nil && meta.Kind() != jsonval.Null {
		if meta.Kind() != jsonval.Object {
			return c, fmt.Errorf(`"_meta" must be an object`)
		}
		if tok := d.Get(meta, "progressToken"); tok != nil {
			raw, _ := d.Raw(tok)
			c.ProgressToken = json.RawMessage(raw)
		}
	}
	return c, nil
}

// callTool serves tools/call.
func (s *registry) callTool(e *entry) []byte {
	p, err := readToolCall(e.paramsDoc)
	if err != nil {
		return s.fail(e, jsonrpc.CodeInvalidParams, "Invalid params: "+shortErr(err), nil)
	}
	if p.Name == "" {
		return s.fail(e, jsonrpc.CodeInvalidParams, `Invalid params: "name" is required`, nil)
	}
	t, ok := s.srv.opts.Registry.Lookup(p.Name)
	if !ok {
		name := p.Name
		if len(name) > 64 {
			name = name[:64] + "…"
		}
		return s.fail(e, jsonrpc.CodeInvalidParams, "Unknown tool: "+strconv.Quote(name), nil)
	}
	start := time.Now()
	args, bad := t.CheckDoc(p.Arguments)
	if bad != nil {
		s.srv.recordCall(t.Name, time.Since(start), true)
		return s.toolError(e, bad)
	}
	var client tool.Client
	if e.meta != nil {
		var reply []byte
		if client, reply = s.modernCallClient(e, t, args); reply != nil {
			return reply
		}
	}
	rep := newReporter(s, e.key, p.ProgressToken, e.meta)
	o, ctx := s.invoke(e, t, args, client, rep)
	rep.finish() // no progress after this point: the response is next
	elapsed := time.Since(start)

	reply, failed := s.toolReply(e, t, o, ctx, func(v any) []byte {
		res, err := toolResult(v, false)
		if err != nil {
			s.log.Error("tool result did not marshal", zap.String("tool", t.Name), zap.Error(err))
			return s.toolError(e, tool.Errorf(tool.Internal, "the result of %s could not be encoded", t.Name))
		}
		return s.ok(e, res)
	}, s.toolError)
	s.srv.recordCall(t.Name, elapsed, failed)
	return reply
}

// callPlain serves a tool as a plain JSON-RPC method: params are the
// arguments and the result is the tool's result object itself.
func (s *registry) callPlain(e *entry, t *tool.Entry) []byte {
	start := time.Now()
	args, bad := t.CheckDoc(e.paramsDoc)
	if bad != nil {
		s.srv.recordCall(t.Name, time.Since(start), true)
		return s.plainError(e, bad)
	}
	o, ctx := s.invoke(e, t, args, tool.Client{}, nil)
	reply, failed := s.toolReply(e, t, o, ctx, func(v any) []byte { return s.result(e, v) }, s.plainError)
	s.srv.recordCall(t.Name, time.Since(start), failed)
	return reply
}

// toolReply turns an outcome into the reply the contract requires.
func (s *registry) toolReply(e *entry, t *tool.Entry, o outcome, ctx context.Context,
	success func(any) []byte, failure func(*entry, *tool.Error) []byte) ([]byte, bool) {
	switch e.cancelMode.Load() {
	case cancelSilently:
		return nil, true // MCP: the client has forgotten the request; send nothing
	case cancelWithReply:
		return s.cancelledReply(e), true
	}
	if o.panicked {
		s.srv.panics.Add(1)
		msg := fmt.Sprintf("Internal error: %T: %v", o.panicVal, o.panicVal)
		if len(msg) > 512 {
			msg = msg[:512] + "…"
		}
		s.log.Error("tool panicked", zap.String("tool", t.Name), zap.String("panic", fmt.Sprint(o.panicVal)),
			zap.ByteString("stack", o.stack))
		return s.fail(e, jsonrpc.CodeInternalError, msg, nil), true
	}
	if o.err == nil && !o.abandoned {
		return success(o.value), false
	}
	if ctx.Err() != nil && (o.abandoned || tool.IsContextDone(o.err)) {
		if e.ctx.Err() != nil { // the session gave up (drain timeout, client gone)
			return s.fail(e, jsonrpc.CodeShuttingDown, "the call was stopped because the daemon is shutting down or the client went away", nil), true
		}
		timeoutMs := o.timeout.Milliseconds()
		return failure(e, &tool.Error{
			Code:    tool.ToolTimeout,
			Message: fmt.Sprintf("%s exceeded its timeout of %d ms", t.Name, timeoutMs),
			Fields:  map[string]any{"timeoutMs": timeoutMs},
		}), true
	}
	if te, ok := tool.AsError(o.err); ok {
		return failure(e, te), true
	}
	if re, ok := tool.AsRPCError(o.err); ok {
		return s.fail(e, re.Code, re.Message, re.Data), true
	}
	// An unclassified error may carry anything (paths, DSNs): log it, reply plainly.
	s.log.Error("tool failed", zap.String("tool", t.Name), zap.Error(o.err))
	return failure(e, tool.Errorf(tool.Internal, "%s failed unexpectedly; the daemon log has the details", t.Name)), true
}

func (s *registry) toolError(e *entry, te *tool.Error) []byte {
	s.srv.errors.Add(1)
	res, err := toolResult(te.Object(), true)
	if err != nil {
		res, _ = toolResult((&tool.Error{Code: te.Code, Message: te.Message}).Object(), true)
	}
	return s.ok(e, res)
}

func (s *registry) plainError(e *entry, te *tool.Error) []byte {
	code := jsonrpc.CodeToolError
	if te.Code == tool.InvalidRequest {
		code = jsonrpc.CodeInvalidParams
	}
	return s.fail(e, code, te.Message, te.Object())
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// toolResult wraps a result object as an MCP CallToolResult: the JSON as text
// in content[0] and, when it is an object and no error, as structuredContent
// too. An error ({code, message, ...}) is not the tool's result: it is in the
// text only, because clients check structuredContent against the tool's
// outputSchema, which describes results (docs/protocol.md).
func toolResult(v any, isError bool) ([]byte, error) {
	body, err := frame.Marshal(v)
	if err != nil {
		return nil, err
	}
	res := struct {
		Content    []textContent   `json:"content"`
		Structured json.RawMessage `json:"structuredContent,omitempty"`
		IsError    bool            `json:"isError,omitempty"`
	}{Content: []textContent{{Type: "text", Text: string(body)}}, IsError: isError}
	if len(body) > 0 && body[0] == '{' && !isError {
		res.Structured = body
	}
	return frame.Marshal(res)
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.TrimSpace(s)
}

// resources serves resources/list (paged like tools/list), resources/read
// and resources/templates/list (hearth has no templates).
func (s *registry) resources(e *entry) []byte {
	switch e.method {
	case "resources/templates/list":
		return s.ok(e, []byte(`{"resourceTemplates":[]}`))
	case "resources/read":
		var p struct {
			URI string `json:"uri"`
		}
		if err := decodeParams(e.params, &p); err != nil || p.URI == "" {
			return s.fail(e, jsonrpc.CodeInvalidParams, `Invalid params: "uri" is required`, nil)
		}
		for _, rp := range s.srv.opts.Registry.ResourceProviders() {
			text, mime, err := rp.ReadResource(p.URI)
			if errors.Is(err, tool.ErrNoResource) {
				continue
			}
			if err != nil {
				s.log.Error("reading a resource failed", zap.String("uri", p.URI), zap.Error(err))
				return s.fail(e, jsonrpc.CodeInternalError, "Internal error: the resource could not be read", nil)
			}
			return s.result(e, map[string]any{"contents": []map[string]string{{"uri": p.URI, "mimeType": mime, "text": text}}})
		}
		uri := p.URI
		if len(uri) > 200 {
			uri = uri[:200] + "…"
		}
		code := jsonrpc.CodeResourceNotFound
		if e.meta != nil {
			code = jsonrpc.CodeInvalidParams // the modern era's resource-not-found code
		}
		return s.fail(e, code, "Resource not found", map[string]string{"uri": uri})
	}
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := decodeParams(e.params, &p); err != nil {
		return s.fail(e, jsonrpc.CodeInvalidParams, "Invalid params: "+err.Error(), nil)
	}
	var all []tool.Resource
	for _, rp := range s.srv.opts.Registry.ResourceProviders() {
		all = append(all, rp.Resources()...)
	}
	offset := 0
	if p.Cursor != nil {
		n, ok := decodeCursor(*p.Cursor)
		if !ok || n > len(all) {
			return s.fail(e, jsonrpc.CodeInvalidParams, "Invalid params: unknown cursor", nil)
		}
		offset = n
	}
	end := min(offset+s.srv.opts.PageSize, len(all))
	res := map[string]any{"resources": append([]tool.Resource{}, all[offset:end]...)}
	if end < len(all) {
		res["nextCursor"] = encodeCursor(end)
	}
	return s.result(e, res)
}
