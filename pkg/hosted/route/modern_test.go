package route

//lint:file-ignore SA1019 legacy clients of a modern upstream answer sampling requests (deprecated in 2026-07-28), which hearth turns into inputResponses

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A legacy client of an upstream that speaks only 2026-07-28: the upstream
// refuses initialize once and is probed with server/discover; the client's
// initialize is answered from the DiscoverResult at the version it asked
// for; its requests reach the upstream with the 2026-07-28 _meta made of
// its own initialize and log level, and their answers and progress come
// back under its own id and token.
func TestLegacyClientOnModernUpstream(t *testing.T) {
	ts := newModernServer()
	h := newHarness(t, ts.srv, Options{})
	a := h.raw()
	a.send(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"legacy-a","version":"7"}}}`)
	m := a.response()
	res, _ := m["result"].(map[string]any)
	if m["id"] != "i" || res == nil || res["protocolVersion"] != "2025-06-18" || res["serverInfo"].(map[string]any)["name"] != "testserver" ||
		res["instructions"] != "a server of the router's tests" || res["capabilities"].(map[string]any)["tools"] == nil {
		t.Fatalf("initialize: %s", m["_text"])
	}
	a.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	b := h.raw()
	b.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"legacy-b","version":"1"}}}`)
	if m := b.response(); m["result"].(map[string]any)["protocolVersion"] != "2025-11-25" {
		t.Fatalf("an unknown version is answered with the newest: %s", m["_text"])
	}
	a.send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`)
	if m := a.response(); m["id"] != float64(2) || m["result"] == nil {
		t.Fatalf("setLevel: %s", m["_text"])
	}
	a.send(callWithToken("77", "wait", `{"key":"a"}`, `"tok"`))
	ts.waitStarted("a")
	pr := a.next()
	if pr["method"] != "notifications/progress" || pr["params"].(map[string]any)["progressToken"] != "tok" {
		t.Fatalf("progress: %s", pr["_text"])
	}
	lg := a.next()
	if lg["method"] != "notifications/message" || !strings.Contains(lg["_text"].(string), "log of a") {
		t.Fatalf("log: %s", lg["_text"])
	}
	ts.releaseKey("a")
	if m := a.response(); m["id"] != float64(77) || textOfRaw(t, m) != "released a" {
		t.Fatalf("call: %s", m["_text"])
	}
	b.send(callFrame(`"77"`, "echo", `{"text":"b"}`))
	if m := b.response(); m["id"] != "77" || textOfRaw(t, m) != "b" {
		t.Fatalf("b's call: %s", m["_text"])
	}
	if h.count("initialize") != 1 || h.count("server/discover") != 1 || h.count("notifications/initialized") != 0 || h.count("logging/setLevel") != 0 {
		t.Fatalf("upstream saw %v", h.sent)
	}
	calls := h.framesOf("tools/call")
	var sent struct {
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	json.Unmarshal([]byte(calls[0]), &sent)
	meta := sent.Params.Meta
	if meta[metaVersion] != "2026-07-28" || meta[metaLogLevel] != "info" || meta[metaClientInfo].(map[string]any)["name"] != "legacy-a" ||
		meta[metaCapabilities].(map[string]any)["sampling"] == nil || meta["progressToken"] == "tok" {
		t.Fatalf("a's call went up as %s", calls[0])
	}
	sent.Params.Meta = nil
	json.Unmarshal([]byte(calls[1]), &sent)
	if sent.Params.Meta[metaClientInfo].(map[string]any)["name"] != "legacy-b" || sent.Params.Meta[metaLogLevel] != nil {
		t.Fatalf("b's call went up as %s", calls[1])
	}
	if v := h.r.ProtocolVersion(); v != "2026-07-28" {
		t.Fatalf("era %q", v)
	}
}

// The upstream's InputRequiredResult becomes the server-to-client requests
// of the 2025 protocol, sent to the client whose request it answers even
// with another client's call in flight (it is certain whose it is); the
// answers go back as inputResponses with the requestState, and the client
// sees one answer under its own id.
func TestInputRequiredGoesToItsClient(t *testing.T) {
	ts := newModernServer()
	h := newHarness(t, ts.srv, Options{})
	asked := make(chan string, 4)
	sampler := func(name string) *mcp.ClientOptions {
		return &mcp.ClientOptions{CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked <- name
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "answer of " + name}}, nil
		}}
	}
	a, _ := h.sdkClient(sampler("a"), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	b, _ := h.sdkClient(sampler("b"), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.CallTool(t.Context(), &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{"key": "hold"}})
	}()
	ts.waitStarted("hold")
	res, err := a.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{"text": "hi"}})
	if err != nil || textOf(res) != "sampled: answer of a" {
		t.Fatalf("sample: %v %v", err, res)
	}
	if who := <-asked; who != "a" {
		t.Fatalf("sampling went to %s", who)
	}
	ts.releaseKey("hold")
	<-done
	if n := h.count("tools/call"); n != 3 {
		t.Fatalf("upstream saw %d tools/call, want 3 (wait, sample, its retry)", n)
	}

	// Two input requests in one round, with requestState, from a raw client.
	c := h.raw()
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	c.response()
	c.send(callFrame(`"ask-1"`, "ask", `{}`))
	for range 2 {
		m := c.next()
		switch m["method"] {
		case "roots/list":
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"roots":[{"uri":"file:///w"}]}}`, mustJSON(m["id"])))
		case "elicitation/create":
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"ann"}}}`, mustJSON(m["id"])))
		default:
			t.Fatalf("unexpected %s", m["_text"])
		}
	}
	if m := c.response(); m["id"] != "ask-1" || textOfRaw(t, m) != "file:///w accept ann" {
		t.Fatalf("ask: %s", m["_text"])
	}
	retry := h.framesOf("tools/call")
	if last := retry[len(retry)-1]; !strings.Contains(last, `"requestState":"state-1"`) || !strings.Contains(last, `"inputResponses"`) {
		t.Fatalf("retry: %s", last)
	}

	// A client error answer ends the request with it; a cancel while the
	// client is asked ends it without an answer.
	c.send(callFrame("5", "ask", `{}`))
	m := c.next()
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-1,"message":"user said no"}}`, mustJSON(m["id"])))
	c.next() // the other input request
	if m := c.response(); m["id"] != float64(5) || !strings.Contains(m["_text"].(string), "user said no") {
		t.Fatalf("error answer: %s", m["_text"])
	}
	c.send(callFrame("6", "ask", `{}`))
	c.next()
	c.next()
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}`)
	c.send(callFrame("6", "echo", `{"text":"id free again"}`))
	if m := c.response(); textOfRaw(t, m) != "id free again" {
		t.Fatalf("after cancel: %s", m["_text"])
	}
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
	for _, p := range h.r.flight.byKey {
		if p.method == "tools/call" {
			t.Fatalf("a call is still pending: %+v", p)
		}
	}
	if len(h.r.s2c.byID) != 0 {
		t.Fatalf("input requests left: %v", h.r.s2c.byID)
	}
}

// List changes of a modern upstream reach legacy clients as 2025
// notifications (hearth holds a listen on the upstream) and each modern
// client on its own listen, under that listen's id; resource
// subscriptions of legacy clients become listens for their URI.
func TestModernUpstreamListChangesAndSubscriptions(t *testing.T) {
	ts := newModernServer()
	h := newHarness(t, ts.srv, Options{})
	a := h.raw()
	a.initialize()
	a.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	a.response()
	mod := h.raw()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	mod.send(`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{` + meta + `}}`)
	if m := mod.response(); !strings.Contains(m["_text"].(string), `"supportedVersions":["2026-07-28"]`) {
		t.Fatalf("discover: %s", m["_text"])
	}
	mod.send(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{` + meta + `,"notifications":{"toolsListChanged":true,"promptsListChanged":true}}}`)
	ack := mod.next()
	if ack["method"] != "notifications/subscriptions/acknowledged" || !strings.Contains(ack["_text"].(string), `"io.modelcontextprotocol/subscriptionId":"L"`) ||
		!strings.Contains(ack["_text"].(string), `"notifications":{"toolsListChanged":true}`) {
		t.Fatalf("ack: %s", ack["_text"])
	}
	h.settled()
	mcp.AddTool(ts.srv, &mcp.Tool{Name: "new"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	if m := a.next(); m["method"] != "notifications/tools/list_changed" || strings.Contains(m["_text"].(string), "subscriptionId") {
		t.Fatalf("legacy list_changed: %s", m["_text"])
	}
	if m := mod.next(); m["method"] != "notifications/tools/list_changed" || !strings.Contains(m["_text"].(string), `"io.modelcontextprotocol/subscriptionId":"L"`) {
		t.Fatalf("modern list_changed: %s", m["_text"])
	}
	a.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if m := a.response(); !strings.Contains(m["_text"].(string), `"new"`) {
		t.Fatalf("stale list: %s", m["_text"])
	}
	// The modern client's own requests keep their _meta.
	mod.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m"},` + meta + `}}`)
	if m := mod.response(); textOfRaw(t, m) != "m" {
		t.Fatalf("modern call: %s", m["_text"])
	}
	if f := h.framesOf("tools/call"); !strings.Contains(f[0], `"io.modelcontextprotocol/clientCapabilities":{}`) || strings.Contains(f[0], "clientInfo") {
		t.Fatalf("modern call went up as %s", f[0])
	}
	mod.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L"}}`)

	a.send(`{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"test://a"}}`)
	if m := a.response(); m["id"] != float64(4) || m["result"] == nil {
		t.Fatalf("subscribe: %s", m["_text"])
	}
	waitFor(t, func() bool { return ts.subscriptions() == "+test://a" })
	ts.srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://a"})
	if m := a.next(); m["method"] != "notifications/resources/updated" || strings.Contains(m["_text"].(string), "subscriptionId") {
		t.Fatalf("update: %s", m["_text"])
	}
	mod.quiet(100 * time.Millisecond)
	a.send(`{"jsonrpc":"2.0","id":5,"method":"resources/unsubscribe","params":{"uri":"test://a"}}`)
	a.response()
	waitFor(t, func() bool { return ts.subscriptions() == "+test://a,-test://a" })
}

// Go SDK clients on a modern upstream: one that probes with server/discover
// stays modern (its own _meta, its own MRTR retries), one pinned to
// 2025-11-25 is translated; both on one upstream.
func TestGoSDKClientsOnModernUpstream(t *testing.T) {
	ts := newModernServer()
	h := newHarness(t, ts.srv, Options{})
	sampler := &mcp.ClientOptions{CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "yes"}}, nil
	}}
	modern, _ := h.sdkClient(sampler, nil)
	legacy, _ := h.sdkClient(sampler, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	for name, cs := range map[string]*mcp.ClientSession{"modern": modern, "legacy": legacy} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{"text": "q"}})
		if err != nil || textOf(res) != "sampled: yes" {
			t.Fatalf("%s: %v %v", name, err, res)
		}
		if cs.InitializeResult().ServerInfo.Name != "testserver" {
			t.Fatalf("%s: server %+v", name, cs.InitializeResult().ServerInfo)
		}
	}
	if n := h.count("initialize"); n != 1 {
		t.Fatalf("initialize sent %d times", n)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A modern client's listen naming a resource: hearth opens a listen for
// the URI upstream, the update reaches the client under its own listen's
// id, and its cancel closes hearth's listen (the upstream unsubscribes).
func TestModernClientResourceListen(t *testing.T) {
	ts := newModernServer()
	h := newHarness(t, ts.srv, Options{})
	mod := h.raw()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	mod.send(`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{` + meta + `,"notifications":{"resourceSubscriptions":["test://a"]}}}`)
	ack := mod.next()
	if ack["method"] != "notifications/subscriptions/acknowledged" || !strings.Contains(ack["_text"].(string), `"resourceSubscriptions":["test://a"]`) ||
		!strings.Contains(ack["_text"].(string), `"io.modelcontextprotocol/subscriptionId":7`) {
		t.Fatalf("ack: %s", ack["_text"])
	}
	waitFor(t, func() bool { return ts.subscriptions() == "+test://a" })
	ts.srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://a"})
	if m := mod.next(); m["method"] != "notifications/resources/updated" || !strings.Contains(m["_text"].(string), `"io.modelcontextprotocol/subscriptionId":7`) {
		t.Fatalf("update: %s", m["_text"])
	}
	// Its id is taken while the listen is open.
	mod.send(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{` + meta + `}}`)
	if m := mod.response(); !strings.Contains(m["_text"].(string), "still in flight") {
		t.Fatalf("reused listen id: %s", m["_text"])
	}
	mod.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	waitFor(t, func() bool { return ts.subscriptions() == "+test://a,-test://a" })
	mod.quiet(100 * time.Millisecond)
}

// A probing client that comes first to a legacy upstream starts it (the
// upstream is initialized with the capabilities and clientInfo of the
// probe's _meta) and is served in 2026-07-28 terms once the era is known
// (bridge.go).
func TestProbeFirstOnLegacyUpstream(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	cs, _ := h.sdkClient(&mcp.ClientOptions{}, nil)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q", v)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	if err != nil || textOf(res) != "x" {
		t.Fatalf("echo: %v %v", err, res)
	}
	if n := h.count("server/discover"); n != 0 {
		t.Fatal("the probe reached the legacy upstream")
	}
	if f := h.framesOf("initialize"); len(f) != 1 || !strings.Contains(f[0], `"clientInfo":{"name":"sdk"`) {
		t.Fatalf("initialize: %v", f)
	}
}

// A modern upstream that crashes is started and probed again; a legacy
// client's next call works and list changes reach it through hearth's
// reopened listen.
func TestModernUpstreamRestart(t *testing.T) {
	ts := newModernServer()
	h := newHarness(t, ts.srv, Options{})
	a := h.raw()
	a.initialize()
	a.send(callFrame("1", "echo", `{"text":"one"}`))
	a.response()
	h.kill()
	a.send(callFrame("2", "echo", `{"text":"two"}`))
	if m := a.response(); textOfRaw(t, m) != "two" {
		t.Fatalf("after restart: %s", m["_text"])
	}
	if h.count("server/discover") != 2 || h.count("subscriptions/listen") != 2 {
		t.Fatalf("upstream saw %v", h.sent)
	}
	h.settled()
	mcp.AddTool(ts.srv, &mcp.Tool{Name: "later"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	if m := a.next(); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("list_changed: %s", m["_text"])
	}
}
