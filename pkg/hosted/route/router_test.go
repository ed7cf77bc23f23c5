package route

//lint:file-ignore SA1019 the router must route the 2025-era requests (sampling, roots, logging) that 2026-07-28 deprecates

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Two clients use the same ids, and one client uses 77 and "77": every
// answer comes back under exactly the id its request had, to its client.
func TestIDsComeBackExactlyAsSent(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a, b := h.raw(), h.raw()
	a.initialize()
	b.initialize()
	a.send(callFrame("77", "echo", `{"text":"a-number"}`))
	a.send(callFrame(`"77"`, "echo", `{"text":"a-string"}`))
	b.send(callFrame("77", "echo", `{"text":"b-number"}`))
	got := map[string]string{}
	for range 2 {
		m := a.response()
		got["a"+string(mustJSON(m["id"]))] = textOfRaw(t, m)
	}
	m := b.response()
	got["b"+string(mustJSON(m["id"]))] = textOfRaw(t, m)
	want := map[string]string{`a77`: "a-number", `a"77"`: "a-string", `b77`: "b-number"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

func textOfRaw(t *testing.T, m map[string]any) string {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("not a result: %s", m["_text"])
	}
	content := res["content"].([]any)
	return content[0].(map[string]any)["text"].(string)
}

// The upstream is initialized once; a later client gets the cached result
// at once, and hearth answers ping without the upstream.
func TestInitializeOnceAndPingAnsweredByHearth(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	p := h.raw()
	p.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if m := p.response(); m["id"] != "p" || m["result"] == nil {
		t.Fatalf("ping: %s", m["_text"])
	}
	if h.starts != 0 {
		t.Fatal("a ping started the upstream")
	}
	a := h.raw()
	a.initialize()
	b := h.raw()
	b.send(strings.Replace(initReq, "%s", `"b-init"`, 1))
	m := b.response()
	res := m["result"].(map[string]any)
	if m["id"] != "b-init" || res["serverInfo"].(map[string]any)["name"] != "testserver" || res["instructions"] != "a server of the router's tests" {
		t.Fatalf("cached initialize: %s", m["_text"])
	}
	h.settled()
	if n := h.count("initialize"); n != 1 {
		t.Fatalf("upstream saw %d initialize, want 1", n)
	}
	if n := h.count("notifications/initialized"); n != 1 {
		t.Fatalf("upstream saw %d initialized, want 1", n)
	}
}

// Progress and a log message sent during a client's call reach that client
// only, under its own progress token; a cancel from one client cancels only
// its own call, though both used the same id.
func TestProgressLogsAndCancelStayWithTheirClient(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a, b := h.raw(), h.raw()
	a.initialize()
	b.initialize()
	// The go-sdk server logs only once a level is set.
	a.send(`{"jsonrpc":"2.0","id":"l","method":"logging/setLevel","params":{"level":"info"}}`)
	a.response()
	b.send(`{"jsonrpc":"2.0","id":"l","method":"logging/setLevel","params":{"level":"info"}}`)
	b.response()

	a.send(callWithToken("5", "wait", `{"key":"a"}`, `"tok"`))
	ts.waitStarted("a")
	// Only a has a call in flight: its progress and log are its own.
	pr := a.next()
	if pr["method"] != "notifications/progress" || pr["params"].(map[string]any)["progressToken"] != "tok" {
		t.Fatalf("a's progress: %s", pr["_text"])
	}
	lg := a.next()
	if lg["method"] != "notifications/message" || !strings.Contains(lg["_text"].(string), "log of a") {
		t.Fatalf("a's log: %s", lg["_text"])
	}
	b.quiet(200 * time.Millisecond)

	b.send(callWithToken("5", "wait", `{"key":"b"}`, `7`))
	ts.waitStarted("b")
	pr = b.next()
	if pr["method"] != "notifications/progress" || pr["params"].(map[string]any)["progressToken"] != float64(7) {
		t.Fatalf("b's progress: %s", pr["_text"])
	}
	// Two clients in flight: the log of b's call is not certainly b's, so
	// both get it (each by its own level).
	b.next()
	a.next()

	a.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
	deadline := time.Now().Add(5 * time.Second)
	for ts.cancelledKeys() != "a" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := ts.cancelledKeys(); got != "a" {
		t.Fatalf("cancelled %q, want only a's call", got)
	}
	ts.releaseKey("b")
	if m := b.response(); m["id"] != float64(5) || textOfRaw(t, m) != "released b" {
		t.Fatalf("b's answer: %s", m["_text"])
	}
	// A cancel naming a request the client does not have reaches nobody.
	b.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`)
	a.quiet(100 * time.Millisecond)
}

// Sampling during the only client's call reaches that client and its answer
// returns to the upstream; with two clients in flight it is refused and no
// client sees it.
func TestSamplingGoesToTheOnlyClientInFlight(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	asked := make(chan string, 4)
	handler := func(name string) *mcp.ClientOptions {
		return &mcp.ClientOptions{CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked <- name
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "answer of " + name}}, nil
		}}
	}
	a, _ := h.sdkClient(handler("a"), nil)
	b, _ := h.sdkClient(handler("b"), nil)
	ctx := t.Context()
	res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{"text": "hi"}})
	if err != nil || textOf(res) != "sampled: answer of a" {
		t.Fatalf("sample: %v %v", err, res)
	}
	if got := <-asked; got != "a" {
		t.Fatalf("sampling went to %s", got)
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		b.CallTool(ctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{"key": "hold"}})
	}()
	ts.waitStarted("hold")
	res, err = a.CallTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{"text": "hi"}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "shared") {
		t.Fatalf("sample with two clients in flight: %v %v", err, textOf(res))
	}
	select {
	case who := <-asked:
		t.Fatalf("client %s was asked to sample", who)
	default:
	}
	ts.releaseKey("hold")
	<-done
}

// A client that opens with server/discover falls back to initialize and is
// served beside a 2025 client; roots/list on a directory instance is
// answered by the client whose call asked, with its own roots, never by
// hearth.
func TestDiscoverProbeFallsBackAndDirectoryRoots(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{Directory: true})
	legacy, _ := h.sdkClient(&mcp.ClientOptions{}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	modern, _ := h.sdkClient(&mcp.ClientOptions{}, nil) // probes with server/discover first
	ctx := t.Context()
	for _, cs := range []*mcp.ClientSession{legacy, modern} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		if err != nil || textOf(res) != "x" {
			t.Fatalf("echo: %v %v", err, res)
		}
	}
	if n := h.count("initialize"); n != 1 {
		t.Fatalf("upstream initialized %d times", n)
	}
	if n := h.count("server/discover"); n != 0 {
		t.Fatalf("the probe reached the legacy upstream")
	}
}

// roots/list is answered by a client, with its own roots, never by
// hearth: during a call by the client that made it; asked with no call in
// flight on a directory instance, by the client whose roots the upstream
// holds, else the one attached longest (its clients share a directory and
// a shape); on a global instance, refused unless only one client is
// attached. Only the holder's roots/list_changed reaches the upstream.
func TestRootsAreAClientsOwn(t *testing.T) {
	rootsInit := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"raw","version":"1"}}}`
	open := func(h *upstreamHarness) *rawClient {
		rc := h.raw()
		rc.send(rootsInit)
		rc.response()
		rc.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return rc
	}
	// answerRoots answers the roots/list rc is asked with uri.
	answerRoots := func(rc *rawClient, uri string) {
		t.Helper()
		m := rc.next()
		if m["method"] != "roots/list" {
			t.Fatalf("want roots/list, got %s", m["_text"])
		}
		id, _ := json.Marshal(m["id"])
		rc.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"roots":[{"uri":"` + uri + `"}]}}`)
	}
	later := func(ts *testServer, rc *rawClient, id string) {
		t.Helper()
		rc.send(callFrame(id, "roots-later", `{"key":"later`+id+`"}`))
		if m := rc.response(); !strings.Contains(m["_text"].(string), "later") {
			t.Fatalf("roots-later: %s", m["_text"])
		}
		ts.releaseKey("later" + id)
	}

	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{Directory: true})
	a, b := open(h), open(h)
	// In a call: its own client.
	b.send(callFrame("1", "roots", `{}`))
	answerRoots(b, "file:///b")
	if m := b.response(); !strings.Contains(m["_text"].(string), "file:///b") {
		t.Fatalf("roots in b's call: %s", m["_text"])
	}
	a.quiet(50 * time.Millisecond)
	// No call in flight: b, whose roots the upstream holds.
	later(ts, a, "2")
	answerRoots(b, "file:///b2")
	if got := <-ts.laterRoots; got != "file:///b2" {
		t.Fatalf("roots asked with no call in flight: %q", got)
	}
	a.quiet(50 * time.Millisecond)
	// a's change of roots is not the upstream's; b's is.
	a.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	b.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	h.settled()
	if n := h.count("notifications/roots/list_changed"); n != 1 {
		t.Fatalf("%d roots/list_changed reached the upstream, want b's only", n)
	}
	// b gone: a, attached longest of those left (a third came later).
	c := open(h)
	b.c.Detach()
	later(ts, c, "3")
	answerRoots(a, "file:///a")
	if got := <-ts.laterRoots; got != "file:///a" {
		t.Fatalf("roots after the holder left: %q", got)
	}
	c.quiet(50 * time.Millisecond)

	// A global instance: refused with two clients and none in flight.
	ts = newTestServer()
	h = newHarness(t, ts.srv, Options{})
	a, b = open(h), open(h)
	later(ts, a, "4")
	if got := <-ts.laterRoots; !strings.Contains(got, "shared") {
		t.Fatalf("roots on a global instance: %q", got)
	}
	a.quiet(50 * time.Millisecond)
	b.quiet(50 * time.Millisecond)
}

// Subscriptions are counted per client: one subscribe and one unsubscribe
// reach the upstream, and updates reach subscribers only.
func TestSubscriptionsAreCountedPerClient(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a, b, c := h.raw(), h.raw(), h.raw()
	for _, x := range []*rawClient{a, b, c} {
		x.initialize()
	}
	a.send(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://a"}}`)
	a.response()
	b.send(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://a"}}`)
	b.response()
	ts.srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://a"})
	for _, x := range []*rawClient{a, b} {
		if m := x.next(); m["method"] != "notifications/resources/updated" {
			t.Fatalf("update: %s", m["_text"])
		}
	}
	c.quiet(100 * time.Millisecond)
	a.send(`{"jsonrpc":"2.0","id":2,"method":"resources/unsubscribe","params":{"uri":"test://a"}}`)
	a.response()
	if got := ts.subscriptions(); got != "+test://a" {
		t.Fatalf("upstream saw %q, want one subscribe", got)
	}
	b.c.Detach() // the last subscriber leaving releases it
	deadline := time.Now().Add(5 * time.Second)
	for ts.subscriptions() != "+test://a,-test://a" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := ts.subscriptions(); got != "+test://a,-test://a" {
		t.Fatalf("upstream saw %q", got)
	}
}

// The upstream runs at the most verbose level asked for; each client gets
// only what its own level lets through.
func TestLogLevelPerClient(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a, b := h.raw(), h.raw()
	a.initialize()
	b.initialize()
	a.send(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`)
	a.response()
	b.send(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"error"}}`)
	b.response()
	// Two calls in flight, so the log messages are everybody's; b's level
	// keeps info from it.
	a.send(callFrame("1", "wait", `{"key":"x"}`))
	b.send(callFrame("2", "wait", `{"key":"y"}`))
	ts.waitStarted("x")
	ts.waitStarted("y")
	for range 2 {
		if m := a.next(); m["method"] != "notifications/message" {
			t.Fatalf("a: %s", m["_text"])
		}
	}
	ts.releaseKey("x")
	ts.releaseKey("y")
	a.response()
	if m := b.next(); m["result"] == nil {
		t.Fatalf("b got %s before its answer", m["_text"])
	}
}

// list_changed reaches every client and drops the cached list, for each
// kind of list an upstream announces changes of.
func TestListChangedInvalidatesTheCache(t *testing.T) {
	prompt := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}
	for _, k := range []struct {
		list, changed string
		before        func(*mcp.Server) // what the server offers at initialize, so that it declares the capability
		add           func(*mcp.Server) // adds an item named "new"
	}{
		{"tools/list", "notifications/tools/list_changed", nil, func(s *mcp.Server) {
			mcp.AddTool(s, &mcp.Tool{Name: "new"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{}, nil, nil
			})
		}},
		{"prompts/list", "notifications/prompts/list_changed",
			func(s *mcp.Server) { s.AddPrompt(&mcp.Prompt{Name: "first"}, prompt) },
			func(s *mcp.Server) { s.AddPrompt(&mcp.Prompt{Name: "new"}, prompt) }},
		{"resources/list", "notifications/resources/list_changed", nil, func(s *mcp.Server) {
			s.AddResource(&mcp.Resource{URI: "test://new", Name: "new"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{}, nil
			})
		}},
	} {
		t.Run(k.list, func(t *testing.T) {
			ts := newTestServer()
			if k.before != nil {
				k.before(ts.srv)
			}
			h := newHarness(t, ts.srv, Options{})
			a, b := h.raw(), h.raw()
			a.initialize()
			b.initialize()
			list := `{"jsonrpc":"2.0","id":1,"method":"` + k.list + `"}`
			a.send(list)
			a.response()
			b.send(list)
			b.response()
			if n := h.count(k.list); n != 1 {
				t.Fatalf("upstream saw %d %s, want 1 (cached)", n, k.list)
			}
			k.add(ts.srv)
			for _, x := range []*rawClient{a, b} {
				if m := x.next(); m["method"] != k.changed {
					t.Fatalf("list_changed: %s", m["_text"])
				}
			}
			b.send(list)
			if m := b.response(); !strings.Contains(m["_text"].(string), `"new"`) {
				t.Fatalf("stale list: %s", m["_text"])
			}
			if n := h.count(k.list); n != 2 {
				t.Fatalf("upstream saw %d %s, want 2 (the cache dropped)", n, k.list)
			}
		})
	}
}

// An upstream that dies answers every call in flight at once with an error
// naming the server and its log; the next call starts a new upstream.
func TestUpstreamDeathAnswersInFlightAndRestarts(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{LogPath: "/state/testserver.log"})
	a := h.raw()
	a.initialize()
	a.send(callFrame(`"k"`, "wait", `{"key":"never"}`))
	ts.waitStarted("never")
	h.kill()
	m := a.response()
	if m["id"] != "k" || !strings.Contains(m["_text"].(string), "testserver exited") || m["error"].(map[string]any)["code"] != float64(CodeUpstream) {
		t.Fatalf("in-flight answer: %s", m["_text"])
	}
	a.send(callFrame("2", "echo", `{"text":"again"}`))
	if m := a.response(); textOfRaw(t, m) != "again" {
		t.Fatalf("after restart: %s", m["_text"])
	}
	if h.starts != 2 || h.count("initialize") != 2 {
		t.Fatalf("starts %d, initialize %d", h.starts, h.count("initialize"))
	}
	// A failed instance answers at once, without a new upstream.
	h.kill()
	h.r.Down(h.r.UpstreamError("testserver crashed 5 times in a row"), true)
	a.send(callFrame("3", "echo", `{"text":"x"}`))
	if m := a.response(); !strings.Contains(m["_text"].(string), "crashed 5 times") || !strings.Contains(m["_text"].(string), "/state/testserver.log") {
		t.Fatalf("failed instance: %s", m["_text"])
	}
}

// What the clients set on the upstream (subscriptions, the log level) is
// set again on the upstream that replaces one that died: the new process
// knows nothing of it, and the clients are not asked to say it again.
func TestRestartedUpstreamGetsSubscriptionsAndLevelBack(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a, b := h.raw(), h.raw()
	a.initialize()
	b.initialize()
	a.send(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://a"}}`)
	a.response()
	a.send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}`)
	a.response()
	b.send(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"error"}}`)
	b.response()
	h.kill()
	b.send(callFrame("2", "echo", `{"text":"again"}`))
	if m := b.response(); textOfRaw(t, m) != "again" {
		t.Fatalf("after restart: %s", m["_text"])
	}
	h.settled()
	if h.starts != 2 {
		t.Fatalf("%d starts, want 2", h.starts)
	}
	subs := h.framesOf("resources/subscribe")
	if len(subs) != 2 || !strings.Contains(subs[1], `"test://a"`) {
		t.Fatalf("subscribes sent upstream: %q", subs)
	}
	levels := h.framesOf("logging/setLevel")
	if len(levels) != 3 || !strings.Contains(levels[2], `"warning"`) {
		t.Fatalf("levels sent upstream: %q (want the most verbose asked, warning, again)", levels)
	}
	// The new upstream's update reaches the subscriber, and only it.
	ts.srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "test://a"})
	if m := a.next(); m["method"] != "notifications/resources/updated" {
		t.Fatalf("update after restart: %s", m["_text"])
	}
	b.quiet(100 * time.Millisecond)
}

// A client that leaves has its calls cancelled upstream.
func TestDetachCancelsTheClientsCalls(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a, b := h.raw(), h.raw()
	a.initialize()
	b.initialize()
	a.send(callFrame("1", "wait", `{"key":"gone"}`))
	ts.waitStarted("gone")
	a.c.Detach()
	deadline := time.Now().Add(5 * time.Second)
	for ts.cancelledKeys() != "gone" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := ts.cancelledKeys(); got != "gone" {
		t.Fatalf("cancelled %q", got)
	}
	b.send(callFrame("1", "echo", `{"text":"still"}`))
	if m := b.response(); textOfRaw(t, m) != "still" {
		t.Fatalf("b: %s", m["_text"])
	}
}

// A client instance passes server-to-client requests to its one client,
// roots included.
func TestSingleClientForwardsRoots(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{Mode: Single})
	cl, _ := h.sdkClient(&mcp.ClientOptions{}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	_ = cl
	// go-sdk clients declare roots; add one.
	res, err := cl.CallTool(t.Context(), &mcp.CallToolParams{Name: "roots"})
	if err != nil || res.IsError {
		t.Fatalf("roots: %v %q", err, textOf(res))
	}
}

// Bad frames from a client get their error; the router keeps serving.
func TestBadClientFrames(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a := h.raw()
	for _, tc := range []struct{ in, want string }{
		{`not json`, `-32700`},
		{`[1,2]`, `-32600`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `initialize first`},
		{`{"jsonrpc":"2.0","id":{},"method":"x"}`, `-32600`},
	} {
		a.send(tc.in)
		if m := a.next(); !strings.Contains(m["_text"].(string), tc.want) {
			t.Errorf("%s: got %s, want %s", tc.in, m["_text"], tc.want)
		}
	}
	a.initialize()
	a.send(callFrame("1", "wait", `{"key":"d"}`))
	ts.waitStarted("d")
	a.send(callFrame("1", "echo", `{"text":"dup"}`))
	if m := a.next(); !strings.Contains(m["_text"].(string), "still in flight") {
		t.Fatalf("duplicate id: %s", m["_text"])
	}
	ts.releaseKey("d")
	a.response()
}

// A shared upstream is initialized with what its first client declares,
// and again so after a restart: its clients are all of one shape (the
// table keys instances by it, docs/decisions/0056-client-shape.md), so the
// upstream offers each of them what it would offer it spawned directly.
// The client's _meta, about that one request, is left out.
func TestSharedUpstreamIsInitializedAsItsClientsDeclare(t *testing.T) {
	firsts := map[string]string{
		"none":     `{}`,
		"sampling": `{"sampling":{},"roots":{"listChanged":true}}`,
		"odd":      `{"experimental":{"x":{}},"elicitation":{"form":{},"url":{}}}`,
	}
	for name, caps := range firsts {
		ts := newTestServer()
		h := newHarness(t, ts.srv, Options{})
		a := h.raw()
		a.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":` + caps + `,"clientInfo":{"name":"raw","version":"7"},"_meta":{"trace":"one request's"}}}`)
		if m := a.response(); m["result"] == nil {
			t.Fatalf("%s: initialize: %s", name, m["_text"])
		}
		h.kill()
		a.send(callFrame("1", "echo", `{"text":"again"}`))
		a.response()
		frames := h.framesOf("initialize")
		if len(frames) != 2 {
			t.Fatalf("%s: %d initialize sent upstream", name, len(frames))
		}
		for _, f := range frames {
			var m struct {
				Params map[string]json.RawMessage `json:"params"`
			}
			json.Unmarshal([]byte(f), &m)
			if canonical(m.Params["capabilities"]) != canonical(json.RawMessage(caps)) || string(m.Params["protocolVersion"]) != `"2025-06-18"` ||
				string(m.Params["clientInfo"]) != `{"name":"raw","version":"7"}` {
				t.Fatalf("%s first: the upstream was initialized with %s", name, f)
			}
			if _, ok := m.Params["_meta"]; ok {
				t.Fatalf("%s: the client's _meta reached the shared upstream's initialize: %s", name, f)
			}
		}
	}
}

// A first client that probes with a modern server/discover (as the Go SDK
// does) before falling back to initialize gives a shared legacy upstream
// what its probe declared: the capabilities and clientInfo of its _meta,
// whose shape is that of its initialize of the same (ShapeOf).
func TestSharedUpstreamAfterAModernProbe(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a := h.raw()
	a.send(`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"experimental":{"x":{}}},"io.modelcontextprotocol/clientInfo":{"name":"probe","version":"1"}}}}`)
	a.response() // refused: the upstream speaks 2025
	a.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"x":{}}},"clientInfo":{"name":"probe","version":"1"}}}`)
	a.response()
	h.settled()
	frames := h.framesOf("initialize")
	if len(frames) != 1 {
		t.Fatalf("%d initialize sent upstream", len(frames))
	}
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	json.Unmarshal([]byte(frames[0]), &m)
	if string(m.Params) != `{"capabilities":{"experimental":{"x":{}}},"clientInfo":{"name":"probe","version":"1"},"protocolVersion":"2025-11-25"}` {
		t.Fatalf("after a modern probe the upstream was initialized with %s", m.Params)
	}
	probe := jsonrpc.Parse
	pm, _ := probe([]byte(`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"experimental":{"x":{}}},"io.modelcontextprotocol/clientInfo":{"name":"probe","version":"1"}}}}`))
	im, _ := probe([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"x":{}}},"clientInfo":{"name":"probe","version":"1"}}}`))
	ps, _ := ShapeOf(pm)
	is, _ := ShapeOf(im)
	if ps != is {
		t.Fatalf("the probe's shape %s is not its initialize's %s", ps, is)
	}
}

// A method name with a character JSON must escape is forwarded as valid
// JSON: the frame builder writes \u0001, where strconv.Quote wrote \x01.
func TestOddMethodNamesAreForwardedAsJSON(t *testing.T) {
	var r *Router
	sent := make(chan []byte, 16)
	echo := echoUpstream(&r, false)
	r = New(Options{Name: "odd", Wake: func() {
		go r.Up(WriteFunc(func(f []byte) error {
			sent <- append([]byte(nil), f...)
			return echo.Write(f, "")
		}))
	}})
	frames := make(chan string, 16)
	c := r.Attach(chanPeer(frames), nil)
	c.Handle([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"odd","version":"1"}}}`))
	<-frames
	c.Handle([]byte(`{"jsonrpc":"2.0","id":7,"method":"x/\u0001\"y"}`))
	for f := range sent {
		if bytes.Contains(f, []byte(`"method":"initialize"`)) || bytes.Contains(f, []byte(`"method":"notifications/initialized"`)) {
			continue
		}
		var m struct{ Method string }
		if err := json.Unmarshal(f, &m); err != nil {
			t.Fatalf("the router sent the upstream invalid JSON: %s: %v", f, err)
		}
		if m.Method != "x/\u0001\"y" {
			t.Fatalf("forwarded method %q", m.Method)
		}
		return
	}
}

// A request the upstream makes of a client before the client's
// notifications/initialized (a probing client whose probe started the
// upstream; one whose call came before it said initialized) reaches it
// only after that notification, as a server it spawned would send it
// (docs/decisions/0056-client-shape.md).
func TestUpstreamRequestsWaitForTheClientsInitialized(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{Directory: true})
	a := h.raw()
	a.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	a.response()
	a.send(callFrame("1", "roots", `{}`)) // before notifications/initialized
	a.quiet(200 * time.Millisecond)
	a.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	m := a.next()
	if m["method"] != "roots/list" {
		t.Fatalf("after initialized: %s", m["_text"])
	}
	id, _ := json.Marshal(m["id"])
	a.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"roots":[{"uri":"file:///a"}]}}`)
	if m := a.response(); !strings.Contains(m["_text"].(string), "file:///a") {
		t.Fatalf("roots: %s", m["_text"])
	}
}
