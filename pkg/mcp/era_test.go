package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// meta is a well-formed modern _meta (extra members, such as a log level,
// are added before the closing brace).
func meta(extra string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"modern-test","version":"2"}` + extra + `}`
}

// rootsMeta declares the roots capability.
const rootsMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}`

func resultOf(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	r, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("not a result: %v", m)
	}
	return r
}

// checkModern fails unless a result carries what every modern result must.
func checkModern(t *testing.T, r map[string]any, cacheable bool) {
	t.Helper()
	if r["resultType"] != "complete" {
		t.Fatalf("resultType: %v", r)
	}
	m, _ := r["_meta"].(map[string]any)
	info, _ := m[metaServerInfo].(map[string]any)
	if info["name"] != "hearth" {
		t.Fatalf("_meta serverInfo: %v", r["_meta"])
	}
	if _, has := r["ttlMs"]; has != cacheable || (cacheable && r["cacheScope"] != cacheScope) {
		t.Fatalf("caching hints (cacheable %v): ttlMs %v, cacheScope %v", cacheable, r["ttlMs"], r["cacheScope"])
	}
}

// addRepoTool registers a tool that works on the client's directory and
// reports what it was given. It needs the client's roots unless its
// arguments name a repo_path or the client's directory holds .git.
func addRepoTool(t *testing.T, srv *Server) {
	t.Helper()
	err := srv.Registry().Add(tool.Tool{Name: "repo_tool", Description: "reports its client", SchemaVersion: 1,
		NeedsRoots: func(args *jsonval.Doc, cwd string) bool {
			if args != nil && args.Root().Kind() == jsonval.Object && args.Get(args.Root(), "repo_path") != nil {
				return false
			}
			_, err := os.Stat(filepath.Join(cwd, ".git"))
			return err != nil
		},
		InputSchema: schema(`"repo_path":{"type":"string","description":"the repository"}`),
		Handler: func(ctx context.Context, c *tool.Call) (any, error) {
			return map[string]any{"cwd": c.Client.Cwd, "roots": c.Client.Roots, "name": c.Client.Name}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
}

func TestModernSession(t *testing.T) {
	srv, _ := newTestServer(t, Options{Name: "hearth", Version: "9.9"})
	srv.Registry().AddResources(fakeResources{})
	c := startSession(t, srv)

	c.sendf(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{%s}}`, meta(""))
	d := resultOf(t, c.recv())
	checkModern(t, d, true)
	if v, _ := d["supportedVersions"].([]any); len(v) != 1 || v[0] != "2026-07-28" {
		t.Fatalf("supportedVersions: %v", d["supportedVersions"])
	}
	caps := d["capabilities"].(map[string]any)
	if caps["tools"].(map[string]any)["listChanged"] != true || caps["resources"] == nil || caps["logging"] == nil {
		t.Fatalf("capabilities: %v", caps)
	}

	c.sendf(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{%s}}`, meta(""))
	l := resultOf(t, c.recv())
	checkModern(t, l, true)
	var names []string
	for _, tl := range l["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatalf("tools/list is not in name order: %v", names)
		}
	}

	c.sendf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},%s}}`, meta(""))
	r := c.recv()
	checkModern(t, resultOf(t, r), false)
	if p, isErr := toolPayload(t, r); isErr || p["text"] != "hi" {
		t.Fatalf("echo: %v", r)
	}
	c.sendf(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"nope":1},%s}}`, meta(""))
	r = c.recv()
	checkModern(t, resultOf(t, r), false)
	if p, isErr := toolPayload(t, r); !isErr || p["code"] != "INVALID_REQUEST" {
		t.Fatalf("bad argument: %v", r)
	}

	c.sendf(`{"jsonrpc":"2.0","id":5,"method":"resources/list","params":{%s}}`, meta(""))
	checkModern(t, resultOf(t, c.recv()), true)
	c.sendf(`{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"t://a",%s}}`, meta(""))
	checkModern(t, resultOf(t, c.recv()), true)
	c.sendf(`{"jsonrpc":"2.0","id":7,"method":"resources/templates/list","params":{%s}}`, meta(""))
	checkModern(t, resultOf(t, c.recv()), true)
	c.send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	checkModern(t, resultOf(t, c.recv()), false)

	// Plain tool methods are outside both eras: served as ever.
	c.send(`{"jsonrpc":"2.0","id":9,"method":"plain","params":{"x":4}}`)
	if r := resultOf(t, c.recv()); r["x"] != float64(4) || r["resultType"] != nil {
		t.Fatalf("plain method on a modern connection: %v", r)
	}

	if n := srv.Counters().Errors; n != 1 { // the one bad argument
		t.Fatalf("errors counted: %d, want 1", n)
	}
	info := srv.Clients()[0]
	if info.ProtocolVersion != "2026-07-28" || info.Name != "modern-test" {
		t.Fatalf("client info: %+v", info)
	}
}

// TestModernIsConcurrent: a modern connection runs calls concurrently from
// its first request.
func TestModernIsConcurrent(t *testing.T) {
	srv, tt := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.sendf(`{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"wait","arguments":{"gate":"g"},%s}}`, meta(""))
	c.sendf(`{"jsonrpc":"2.0","id":"e","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},%s}}`, meta(""))
	if r := c.recvResponse(); r["id"] != "e" {
		t.Fatalf("echo did not overtake the waiting call: %v", r)
	}
	tt.open("g")
	if r := c.recvResponse(); r["id"] != "w" {
		t.Fatalf("want w: %v", r)
	}
}

// TestModernLogLevel: log messages only for a request that asked, at its
// level; a legacy session's setLevel does not leak into a modern one.
func TestModernLogLevel(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.sendf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"logger",%s}}`, meta(""))
	if m := c.recv(); m["id"] != float64(1) {
		t.Fatalf("a request without a log level got a notification: %v", m)
	}
	c.sendf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"logger",%s}}`, meta(`,"io.modelcontextprotocol/logLevel":"error"`))
	m := c.recv()
	if m["method"] != "notifications/message" || m["params"].(map[string]any)["level"] != "error" {
		t.Fatalf("want the error line: %v", m)
	}
	if m := c.recv(); m["id"] != float64(2) {
		t.Fatalf("want the result after one message: %v", m)
	}
	c.sendf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"logger",%s}}`, meta(`,"io.modelcontextprotocol/logLevel":"debug"`))
	for _, want := range []string{"debug", "error"} {
		if m := c.recv(); m["params"].(map[string]any)["level"] != want {
			t.Fatalf("want %s: %v", want, m)
		}
	}
	c.recvResponse()
	c.sendf(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"logger",%s}}`, meta(""))
	if m := c.recv(); m["id"] != float64(4) {
		t.Fatalf("an earlier request's log level leaked: %v", m)
	}
}

// TestModernProgressAndCancel: progress on the request's token; a
// cancelled call gets no reply and the connection keeps serving.
func TestModernProgressAndCancel(t *testing.T) {
	srv, tt := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.sendf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","arguments":{"steps":2},%s}}`, meta(`,"progressToken":"p1"`))
	m := c.recv()
	if m["method"] != "notifications/progress" || m["params"].(map[string]any)["progressToken"] != "p1" {
		t.Fatalf("want progress: %v", m)
	}
	checkModern(t, resultOf(t, c.recvResponse()), false)

	c.sendf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{"gate":"never"},%s}}`, meta(""))
	waitFor(t, func() bool { return tt.count("wait:never") == 1 })
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}}`)
	waitFor(t, func() bool { return tt.count("wait:never:cancelled") == 1 })
	c.sendf(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{%s}}`, meta(""))
	if r := c.recv(); r["id"] != float64(3) {
		t.Fatalf("the cancelled call was answered: %v", r)
	}
}

// TestEraMistakes: bad modern requests and requests of the other era get a
// clear, spec-shaped error, and the connection keeps serving.
func TestEraMistakes(t *testing.T) {
	bad := []struct {
		name, frame string
		code        int
		says        string
	}{
		{"no params", `{"jsonrpc":"2.0","id":"x","method":"tools/list"}`, -32602, "_meta"},
		{"no _meta", `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{}}`, -32602, `"_meta" is required`},
		{"_meta not an object", `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"_meta":[]}}`, -32602, "must be an object"},
		{"no version", `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`, -32602, "protocolVersion"},
		{"version not a string", `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}}`, -32602, "must be a string"},
		{"unknown version", `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`, -32022, "1900-01-01"},
		{"legacy version per request", `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}`, -32022, "initialize"},
		{"no capabilities", `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, -32602, "clientCapabilities"},
		{"capabilities not an object", `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":true}}}`, -32602, "clientCapabilities"},
		{"roots not an object", `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":1}}}}`, -32602, "roots"},
		{"clientInfo not an object", `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{` + strings.Replace(meta(""), `{"name":"modern-test","version":"2"}`, `"me"`, 1) + `}}`, -32602, "clientInfo"},
		{"clientInfo without version", `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{` + strings.Replace(meta(""), `,"version":"2"`, ``, 1) + `}}`, -32602, "clientInfo"},
		{"bad log level", `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{` + meta(`,"io.modelcontextprotocol/logLevel":"loud"`) + `}}`, -32602, "logLevel"},
		{"log level not a string", `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{` + meta(`,"io.modelcontextprotocol/logLevel":3`) + `}}`, -32602, "logLevel"},
		{"progress token an object", `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo",` + meta(`,"progressToken":{}`) + `}}`, -32602, "progressToken"},
		{"initialize", `{"jsonrpc":"2.0","id":"x","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`, -32600, "new connection"},
		{"logging/setLevel", `{"jsonrpc":"2.0","id":"x","method":"logging/setLevel","params":{"level":"debug",` + meta("") + `}}`, -32601, "logLevel"},
		{"unknown method", `{"jsonrpc":"2.0","id":"x","method":"nope/nope","params":{` + meta("") + `}}`, -32601, "nope"},
		{"unknown resource", `{"jsonrpc":"2.0","id":"x","method":"resources/read","params":{"uri":"t://zzz",` + meta("") + `}}`, -32602, "Resource not found"},
		{"listen without a filter", `{"jsonrpc":"2.0","id":"x","method":"subscriptions/listen","params":{` + meta("") + `}}`, -32602, "notifications"},
		{"listen with a bad filter", `{"jsonrpc":"2.0","id":"x","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":"yes"},` + meta("") + `}}`, -32602, "boolean"},
		{"roots answered without the capability", `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"repo_tool","inputResponses":{"roots":{"roots":[]}},` + meta("") + `}}`, -32021, "roots"},
		{"malformed roots answer", `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"repo_tool","inputResponses":{"roots":{"roots":"/"}},` + rootsMeta + `}}`, -32602, "roots/list result"},
	}
	srv, _ := newTestServer(t, Options{})
	srv.Registry().AddResources(fakeResources{})
	addRepoTool(t, srv)
	c := startSession(t, srv)
	c.sendf(`{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{%s}}`, meta(""))
	resultOf(t, c.recv())
	for _, b := range bad {
		c.send(b.frame)
		r := c.recv()
		e, _ := r["error"].(map[string]any)
		if errCode(r) != b.code || r["id"] != "x" || !strings.Contains(fmt.Sprint(e["message"]), b.says) {
			t.Errorf("%s: want %d saying %q, got %v", b.name, b.code, b.says, r)
		}
		if b.code == -32022 {
			data, _ := e["data"].(map[string]any)
			if s, _ := data["supported"].([]any); len(s) != 1 || s[0] != "2026-07-28" || data["requested"] == nil {
				t.Errorf("%s: data %v", b.name, e["data"])
			}
		}
		if b.code == -32021 {
			data, _ := e["data"].(map[string]any)
			if rc, _ := data["requiredCapabilities"].(map[string]any); rc["roots"] == nil {
				t.Errorf("%s: data %v", b.name, e["data"])
			}
		}
		c.sendf(`{"jsonrpc":"2.0","id":"after","method":"tools/list","params":{%s}}`, meta(""))
		if r := c.recv(); r["id"] != "after" || r["result"] == nil {
			t.Fatalf("after %s the connection does not serve: %v", b.name, r)
		}
	}

	// On a legacy session, modern requests are refused; the session goes on.
	l := startSession(t, srv)
	l.initialize()
	for _, f := range []string{
		`{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{` + meta("") + `}}`,
		`{"jsonrpc":"2.0","id":"x","method":"server/discover","params":{` + meta("") + `}}`,
	} {
		l.send(f)
		if r := l.recv(); errCode(r) != -32600 || !strings.Contains(fmt.Sprint(r["error"]), "initialize") {
			t.Errorf("modern request on a legacy session: %v", r)
		}
	}
	l.send(`{"jsonrpc":"2.0","id":"after","method":"tools/list"}`)
	if r := l.recv(); r["result"] == nil || resultOf(t, r)["resultType"] != nil {
		t.Fatalf("the legacy session after the refusals: %v", r)
	}
}

// TestDiscoverProbeFallsBack: a server/discover without _meta does not make
// the connection modern: the client may still fall back to initialize.
func TestDiscoverProbeFallsBack(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`)
	if r := c.recv(); errCode(r) != -32602 {
		t.Fatalf("discover without _meta: %v", r)
	}
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if r := c.recv(); r["result"] == nil {
		t.Fatalf("legacy after the probe: %v", r)
	}
}

// TestModernRoots: a tool that works on the client's directory asks a
// roots-capable client for its roots (MRTR) when the hello's directory holds
// no repository, and takes them from the retry.
func TestModernRoots(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	addRepoTool(t, srv)
	repoDir := t.TempDir()
	if err := os.Mkdir(filepath.Join(repoDir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := startSession(t, srv)
	c.send(`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{"cwd":"/","pid":1}}`)

	c.sendf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"repo_tool",%s}}`, rootsMeta)
	r := resultOf(t, c.recv())
	if r["resultType"] != "input_required" || r["inputRequests"].(map[string]any)["roots"].(map[string]any)["method"] != "roots/list" {
		t.Fatalf("want roots asked for: %v", r)
	}
	c.sendf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"repo_tool","inputResponses":{"roots":{"roots":[{"uri":"file://%s"}]}},%s}}`, repoDir, rootsMeta)
	p, _ := toolPayload(t, c.recv())
	if roots, _ := p["roots"].([]any); len(roots) != 1 || roots[0] != repoDir {
		t.Fatalf("the retry's roots: %v", p)
	}
	// Nothing is kept: the next call asks again.
	c.sendf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"repo_tool",%s}}`, rootsMeta)
	if r := resultOf(t, c.recv()); r["resultType"] != "input_required" {
		t.Fatalf("want roots asked for again: %v", r)
	}
	// repo_path, or a client without the roots capability: no question.
	c.sendf(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"repo_tool","arguments":{"repo_path":"/x"},%s}}`, rootsMeta)
	checkModern(t, resultOf(t, c.recv()), false)
	c.sendf(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"repo_tool",%s}}`, meta(""))
	checkModern(t, resultOf(t, c.recv()), false)
	// A hello directory inside a repository answers (another connection:
	// a connection has one hello, its first frame).
	c = startSession(t, srv)
	c.send(`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{"cwd":"` + repoDir + `","pid":1}}`)
	c.sendf(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"repo_tool",%s}}`, rootsMeta)
	r6 := c.recv()
	checkModern(t, resultOf(t, r6), false)
	if p, _ := toolPayload(t, r6); p["cwd"] != repoDir {
		t.Fatalf("the hello's directory: %v", p)
	}
}

// TestListChanged: modern subscribers hear of changes they asked for, tagged
// with their subscription; legacy sessions hear unasked; plain connections
// hear nothing. A cancelled subscription hears no more.
func TestListChanged(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	srv.Registry().AddResources(fakeResources{})
	m := startSession(t, srv)
	m.sendf(`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["t://a"]},%s}}`, meta(""))
	ack := m.recv()
	ap := ack["params"].(map[string]any)
	if ack["method"] != "notifications/subscriptions/acknowledged" || ap["_meta"].(map[string]any)[metaSubscriptionID] != "sub" {
		t.Fatalf("ack: %v", ack)
	}
	if n := ap["notifications"].(map[string]any); len(n) != 1 || n["toolsListChanged"] != true {
		t.Fatalf("honored filter: %v", n)
	}
	m.sendf(`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"resourcesListChanged":true},%s}}`, meta(""))
	m.recv()
	m.sendf(`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":{},%s}}`, meta(""))
	if r := m.recv(); errCode(r) != jsonrpc.CodeDuplicateID {
		t.Fatalf("a second listen with the same id: %v", r)
	}

	l := startSession(t, srv)
	l.initialize()
	p := startSession(t, srv)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"plain","params":{}}`)
	p.recv()
	waitFor(t, func() bool { return len(srv.Clients()) == 3 })
	// The legacy session's notifications/initialized must be read before the change.
	l.send(`{"jsonrpc":"2.0","id":"sync","method":"ping"}`)
	l.recv()

	srv.ListChanged(true, true)
	got := map[string]any{}
	for range 2 {
		n := m.recv()
		got[n["method"].(string)] = n["params"].(map[string]any)["_meta"].(map[string]any)[metaSubscriptionID]
	}
	if got["notifications/tools/list_changed"] != "sub" || got["notifications/resources/list_changed"] != float64(7) {
		t.Fatalf("modern notifications: %v", got)
	}
	for _, want := range []string{"notifications/tools/list_changed", "notifications/resources/list_changed"} {
		if n := l.recv(); n["method"] != want {
			t.Fatalf("legacy: want %s, got %v", want, n)
		}
	}

	m.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub"}}`)
	m.sendf(`{"jsonrpc":"2.0","id":"sync","method":"tools/list","params":{%s}}`, meta(""))
	m.recv()
	srv.ListChanged(true, false)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"plain","params":{}}`)
	if r := p.recv(); r["id"] != float64(2) {
		t.Fatalf("a plain connection was notified: %v", r)
	}
	m.sendf(`{"jsonrpc":"2.0","id":"sync2","method":"tools/list","params":{%s}}`, meta(""))
	if r := m.recv(); r["id"] != "sync2" {
		t.Fatalf("a cancelled subscription was notified: %v", r)
	}
	if n := l.recv(); n["method"] != "notifications/tools/list_changed" {
		t.Fatalf("legacy: %v", n)
	}
}

// TestListenEndsGracefullyOnDrain: a draining daemon answers open
// subscriptions, tagged, so clients know the end was deliberate.
func TestListenEndsGracefullyOnDrain(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.sendf(`{"jsonrpc":"2.0","id":"s","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},%s}}`, meta(""))
	c.recv()
	c.cancel()
	r := c.recv()
	res := resultOf(t, r)
	if r["id"] != "s" || res["resultType"] != "complete" || res["_meta"].(map[string]any)[metaSubscriptionID] != "s" {
		t.Fatalf("graceful end: %v", r)
	}
	if err := c.served(); err != nil {
		t.Fatal(err)
	}
}
