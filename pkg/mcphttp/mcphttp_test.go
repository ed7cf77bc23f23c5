package mcphttp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

const testToken = "0123456789abcdef0123456789abcdef"

// newTestServer serves a small registry (echo, and wait, which runs until
// cancelled) at /mcp.
func newTestServer(t *testing.T, token string) (*httptest.Server, *Handler, chan string) {
	ts, h, events, _ := newLimitedServer(t, Options{Token: token})
	return ts, h, events
}

// newLimitedServer serves the test registry at /mcp with opts (Serve
// filled in). Besides echo and wait: big, whose reply carries params.size
// bytes of text, and gate, which answers once the test closes the channel
// returned.
func newLimitedServer(t *testing.T, opts Options) (*httptest.Server, *Handler, chan string, chan struct{}) {
	t.Helper()
	reg := tool.NewRegistry("test+0")
	obj := json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"text":{"type":"string","description":"what to echo"}}}`)
	if err := reg.Add(tool.Tool{Name: "echo", Description: "echo", SchemaVersion: 1, InputSchema: obj,
		Handler: func(ctx context.Context, c *tool.Call) (any, error) {
			var a struct{ Text string }
			_ = c.Bind(&a)
			return map[string]any{"text": a.Text}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	events := make(chan string, 16)
	if err := reg.Add(tool.Tool{Name: "wait", Description: "waits until cancelled", SchemaVersion: 1, Timeout: time.Hour,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`),
		Handler: func(ctx context.Context, c *tool.Call) (any, error) {
			events <- "started"
			<-ctx.Done()
			events <- "cancelled"
			return nil, ctx.Err()
		}}); err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(tool.Tool{Name: "big", Description: "a reply of params.size bytes of text", SchemaVersion: 1,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"size":{"type":"integer","description":"bytes"}}}`),
		Handler: func(ctx context.Context, c *tool.Call) (any, error) {
			var a struct{ Size int }
			_ = c.Bind(&a)
			return map[string]any{"text": strings.Repeat("b", a.Size)}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	if err := reg.Add(tool.Tool{Name: "gate", Description: "answers once the test opens the gate", SchemaVersion: 1, Timeout: time.Hour,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`),
		Handler: func(ctx context.Context, c *tool.Call) (any, error) {
			events <- "started"
			select {
			case <-gate:
				return map[string]any{"text": "opened"}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}); err != nil {
		t.Fatal(err)
	}
	srv := mcp.New(mcp.Options{Registry: reg, Version: "test", DrainTimeout: time.Second, AbandonGrace: time.Second})
	opts.Serve = srv.Serve
	h := New(opts)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ts := httptest.NewServer(mux)
	// The handler first: its sessions drain and its streams end, so that
	// the test server, which waits for every request, can close.
	t.Cleanup(func() { h.Close(); ts.Close() })
	return ts, h, events, gate
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func modernBody(method, params string) string {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if params != "" {
		params += ","
	}
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + params + meta + `}}`
}

func do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func newReq(t *testing.T, method, url, body string, hdr map[string]string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	return req
}

// TestBadHTTPInput is the table of requests the endpoint refuses: each gets
// its own status and a body that says why, and the endpoint keeps serving.
func TestBadHTTPInput(t *testing.T) {
	ts, _, _ := newTestServer(t, testToken)
	auth := "Bearer " + testToken
	modernHdr := map[string]string{"Authorization": auth, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	with := func(base map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	a := map[string]string{"Authorization": auth}
	cases := []struct {
		name   string
		method string
		body   string
		hdr    map[string]string
		host   string
		status int
		want   string // in the body
	}{
		{"no token", "POST", initBody, nil, "", 401, ""},
		{"wrong token", "POST", initBody, map[string]string{"Authorization": "Bearer nope"}, "", 401, ""},
		{"token not bearer", "POST", initBody, map[string]string{"Authorization": "Basic " + testToken}, "", 401, ""},
		{"foreign Host", "POST", initBody, a, "evil.example.com", 403, "not a loopback host"},
		{"foreign Host with port", "POST", initBody, a, "evil.example.com:80", 403, "not a loopback host"},
		{"loopback name with a bad port", "POST", initBody, a, "localhost:99999", 403, "not a loopback host"},
		{"foreign Origin", "POST", initBody, with(a, "Origin", "http://evil.example.com"), "", 403, "not a local origin"},
		{"null Origin", "POST", initBody, with(a, "Origin", "null"), "", 403, "not a local origin"},
		{"Origin with a path", "POST", initBody, with(a, "Origin", "http://localhost/x"), "", 403, "not a local origin"},
		{"PUT", "PUT", initBody, a, "", 405, "Method Not Allowed"},
		{"PATCH", "PATCH", initBody, a, "", 405, "Method Not Allowed"},
		{"text body", "POST", initBody, with(a, "Content-Type", "text/plain"), "", 415, "Content-Type"},
		{"no Content-Type", "POST", initBody, with(a, "Content-Type", ""), "", 415, "Content-Type"},
		{"Accept neither", "POST", initBody, with(a, "Accept", "text/html"), "", 406, "Accept"},
		{"not JSON", "POST", "{not json", a, "", 400, "Parse error"},
		{"empty body", "POST", "", a, "", 400, "Parse error"},
		{"batch", "POST", "[" + initBody + "]", a, "", 400, "batches"},
		{"oversize body", "POST", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"p":"` + strings.Repeat("a", 1<<20) + `"}}`, a, "", 413, "payload_too_large"},
		{"no session", "POST", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, a, "", 400, "Mcp-Session-Id"},
		{"unknown session", "POST", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, with(a, "Mcp-Session-Id", "nope"), "", 404, "no such session"},
		{"GET without session", "GET", "", a, "", 405, "Mcp-Session-Id"},
		{"GET unknown session", "GET", "", with(a, "Mcp-Session-Id", "nope"), "", 404, "no such session"},
		{"GET not SSE", "GET", "", with(a, "Accept", "application/json", "Mcp-Session-Id", "x"), "", 406, "text/event-stream"},
		{"DELETE without session", "DELETE", "", a, "", 400, "Mcp-Session-Id"},
		{"DELETE unknown session", "DELETE", "", with(a, "Mcp-Session-Id", "nope"), "", 404, "no such session"},
		{"modern header, no envelope", "POST", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, modernHdr, "", 400, "-32602"},
		{"modern, version header mismatch", "POST", modernBody("tools/list", ""), with(modernHdr, "MCP-Protocol-Version", "2025-11-25"), "", 400, "-32020"},
		{"modern, no version header", "POST", modernBody("tools/list", ""), with(modernHdr, "MCP-Protocol-Version", ""), "", 400, "-32020"},
		{"modern, no method header", "POST", modernBody("tools/list", ""), with(modernHdr, "Mcp-Method", ""), "", 400, "-32020"},
		{"modern, method header mismatch", "POST", modernBody("tools/list", ""), with(modernHdr, "Mcp-Method", "TOOLS/LIST"), "", 400, "-32020"},
		{"modern, no name header", "POST", modernBody("tools/call", `"name":"echo"`), with(modernHdr, "Mcp-Method", "tools/call"), "", 400, "Mcp-Name"},
		{"modern, name header mismatch", "POST", modernBody("tools/call", `"name":"echo"`), with(modernHdr, "Mcp-Method", "tools/call", "Mcp-Name", "wait"), "", 400, "-32020"},
		{"modern, bad base64 name", "POST", modernBody("tools/call", `"name":"echo"`), with(modernHdr, "Mcp-Method", "tools/call", "Mcp-Name", "=?base64?!!?="), "", 400, "Base64"},
		{"modern, unsupported version", "POST", strings.Replace(modernBody("tools/list", ""), "2026-07-28", "1999-01-01", 1), with(modernHdr, "MCP-Protocol-Version", "1999-01-01"), "", 400, "-32022"},
		{"modern, malformed _meta", "POST", `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, modernHdr, "", 400, "clientCapabilities"},
		{"modern initialize", "POST", modernBody("initialize", ""), with(modernHdr, "Mcp-Method", "initialize"), "", 404, "-32601"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := newReq(t, c.method, ts.URL+"/mcp", c.body, c.hdr)
			if c.host != "" {
				req.Host = c.host
			}
			res, body := do(t, req)
			if res.StatusCode != c.status {
				t.Fatalf("status %d, want %d; body %s", res.StatusCode, c.status, body)
			}
			if c.status == 401 {
				if body != "" || res.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("401 must carry WWW-Authenticate and nothing else; body %q", body)
				}
				return
			}
			if !strings.Contains(body, c.want) {
				t.Errorf("body %s lacks %q", body, c.want)
			}
			if !json.Valid([]byte(body)) {
				t.Errorf("body is not one JSON-RPC message: %s", body)
			}
		})
	}
	// A bare ping under a modern header is answered, as on every endpoint.
	res, body := do(t, newReq(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","id":"p","method":"ping"}`, with(modernHdr, "Mcp-Method", "ping")))
	if res.StatusCode != 200 || !strings.Contains(body, `"result"`) {
		t.Fatalf("modern ping: %d %s", res.StatusCode, body)
	}
	// After all that, the endpoint still serves.
	res, body = do(t, newReq(t, "POST", ts.URL+"/mcp", modernBody("tools/list", ""), modernHdr))
	if res.StatusCode != 200 || !strings.Contains(body, `"echo"`) {
		t.Fatalf("endpoint stopped serving: %d %s", res.StatusCode, body)
	}
}

// TestBodyCutOff: a body shorter than its Content-Length is a clear 400.
func TestBodyCutOff(t *testing.T) {
	ts, _, _ := newTestServer(t, "")
	c, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\":\"2.0\"")
	_ = c.(*net.TCPConn).CloseWrite()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 400 || !strings.Contains(string(b), "could not be read whole") {
		t.Fatalf("cut-off body: %d %s", res.StatusCode, b)
	}
}

func TestParseEventID(t *testing.T) {
	for v, want := range map[string]bool{
		"1-0": true, "0-12": true, " 3-4 ": true,
		"": false, "1": false, "-1-2": false, "1--2": false, "a-1": false, "1-b": false, "1-2-3": false,
		"99999999999999999999-1": false, "1-0x10": false,
	} {
		if _, _, ok := parseEventID(v); ok != want {
			t.Errorf("parseEventID(%q) ok = %v, want %v", v, ok, want)
		}
	}
}

func TestDecodeParamValue(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"echo", "echo", true},
		{"=?base64?ZWNobw==?=", "echo", true},
		{"=?base64?ZWNobw?=", "", false},                 // missing padding
		{"=?base64?!!!!?=", "", false},                   // not Base64
		{"=?base64??=", "", true},                        // empty value
		{"=?base64?ZWNobw==", "=?base64?ZWNobw==", true}, // no closing marker: literal
	} {
		got, ok := decodeParamValue(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("decodeParamValue(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestBodiesDrawOnTheBudget: a large body is refused 503 while the
// daemon-wide budget is spent; a small one is always read.
func TestBodiesDrawOnTheBudget(t *testing.T) {
	budget := frame.NewBudget(512 << 10)
	reg := tool.NewRegistry("test+0")
	srv := mcp.New(mcp.Options{Registry: reg})
	h := New(Options{Serve: srv.Serve, Budget: budget})
	ts := httptest.NewServer(h)
	defer func() { h.Close(); ts.Close() }()
	if !budget.Take(400<<10, false) {
		t.Fatal("setup")
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("a", 200<<10) + `"}}`
	res, body := do(t, newReq(t, "POST", ts.URL, big, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "ping"}))
	if res.StatusCode != 503 || !strings.Contains(body, "retry later") {
		t.Fatalf("large body with the budget spent: %d %s", res.StatusCode, body)
	}
	res, body = do(t, newReq(t, "POST", ts.URL, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "ping"}))
	if res.StatusCode != 200 {
		t.Fatalf("small body with the budget spent: %d %s", res.StatusCode, body)
	}
	budget.Give(400 << 10)
	res, body = do(t, newReq(t, "POST", ts.URL, big, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "ping"}))
	if res.StatusCode != 200 || budget.Used() != 0 {
		t.Fatalf("large body with room: %d %s, %d bytes still held", res.StatusCode, body, budget.Used())
	}
}
