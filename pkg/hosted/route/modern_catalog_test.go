package route

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// modernCatalogServer is a go-sdk server that speaks only 2026-07-28,
// listing the named tools one a page, whose DiscoverResult is fresh for an
// hour and whose tools/list results for toolsTTL milliseconds.
func modernCatalogServer(toolsTTL int, tools ...string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "modcat", Version: "2.0.0"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{"2026-07-28"}, PageSize: 1,
		SetCacheable: func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
			c.TTLMs = 3600_000
			if _, ok := req.(*mcp.ListToolsRequest); ok {
				c.TTLMs = toolsTTL
			}
		}})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "initialize" {
				return nil, &jsonrpc.Error{Code: -32601, Message: "initialize is not supported"}
			}
			return next(ctx, method, req)
		}
	})
	for _, name := range tools {
		mcp.AddTool(srv, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "called " + name}}}, nil, nil
		})
	}
	return srv
}

// sharedCaps are what the catalog tests' clients declare, and so what a
// shared upstream is initialized with and its catalog's lists fetched with
// (docs/decisions/0056-client-shape.md); sharedInit is a legacy client's
// initialize declaring them.
const (
	sharedCaps = `{"sampling":{},"roots":{},"elicitation":{}}`
	sharedInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + sharedCaps + `,"clientInfo":{"name":"raw","version":"1"}}}`
)

// modernMetaOf is a modern client's _meta declaring caps.
func modernMetaOf(caps string) string {
	return `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps +
		`,"io.modelcontextprotocol/clientInfo":{"name":"modern","version":"1"}}`
}

func (h *upstreamHarness) startCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.starts
}

// A modern upstream is catalogued: its DiscoverResult and its lists
// (fetched with its first client's capabilities in _meta), with its own ttlMs. A
// router seeded with it answers a legacy client's initialize (from the
// DiscoverResult) and a modern client's server/discover and listen, and
// every page of tools/list to either when it declares the capabilities
// the lists were fetched with, starting nothing; a client of other
// capabilities starts the upstream for its list. The started upstream's
// other tools reach the legacy client as tools/list_changed and the
// modern one on its listen.
func TestModernCatalogAnswersWithoutUpstream(t *testing.T) {
	cat := recordAfter(t, modernCatalogServer(60_000, "alpha", "beta"), sharedInit)
	if cat.Discover == nil || cat.InitResult != nil || len(cat.Lists["tools/list"]) != 2 ||
		cat.ListTTL["tools/list"] != time.Minute || cat.DiscoverTTL != time.Hour {
		t.Fatalf("recorded %+v", cat)
	}
	if canonical(cat.ListCaps) != canonical(json.RawMessage(sharedCaps)) {
		t.Fatalf("lists fetched with %s", cat.ListCaps)
	}
	got := make(chan Catalog, 4)
	h := newHarness(t, modernCatalogServer(60_000, "alpha", "beta", "gamma"), Options{Record: func(c Catalog) { got <- c }})
	if !h.r.Seed(cat) {
		t.Fatal("a new shared router refused a modern catalog")
	}
	legacy := h.raw()
	legacy.send(sharedInit)
	m := legacy.response()
	res, _ := m["result"].(map[string]any)
	if res == nil || res["protocolVersion"] != "2025-11-25" || res["serverInfo"].(map[string]any)["name"] != "modcat" {
		t.Fatalf("initialize from the catalog: %s", m["_text"])
	}
	legacy.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	legacy.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	m = legacy.response()
	cursor, _ := m["result"].(map[string]any)["nextCursor"].(string)
	if cursor == "" || !strings.Contains(m["_text"].(string), `"alpha"`) {
		t.Fatalf("first page: %s", m["_text"])
	}
	legacy.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":` + string(mustJSON(cursor)) + `}}`)
	if m := legacy.response(); !strings.Contains(m["_text"].(string), `"beta"`) {
		t.Fatalf("second page: %s", m["_text"])
	}

	modern := h.raw()
	meta := modernMetaOf(`{"elicitation":{},"roots":{},"sampling":{}}`)
	modern.send(`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":` + meta + `}}`)
	if m := modern.response(); !strings.Contains(m["_text"].(string), `"supportedVersions"`) {
		t.Fatalf("discover from the catalog: %s", m["_text"])
	}
	modern.send(`{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"_meta":` + meta + `,"notifications":{"toolsListChanged":true}}}`)
	if m := modern.next(); m["method"] != "notifications/subscriptions/acknowledged" || !strings.Contains(m["_text"].(string), `"toolsListChanged":true`) {
		t.Fatalf("listen: %s", m["_text"])
	}
	modern.send(`{"jsonrpc":"2.0","id":"t","method":"tools/list","params":{"_meta":` + meta + `}}`)
	if m := modern.response(); m["id"] != "t" || !strings.Contains(m["_text"].(string), `"alpha"`) {
		t.Fatalf("modern tools/list: %s", m["_text"])
	}
	if n := h.startCount(); n != 0 {
		t.Fatalf("%d upstreams started for what the catalog holds", n)
	}

	// Other capabilities: the catalog's lists are not theirs.
	other := h.raw()
	other.send(strings.Replace(initReq, "%s", "0", 1))
	other.response()
	other.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}`)
	if m := other.response(); !strings.Contains(m["_text"].(string), `"alpha"`) {
		t.Fatalf("tools/list of other capabilities: %s", m["_text"])
	}
	if n := h.startCount(); n != 1 {
		t.Fatalf("a client of other capabilities started %d upstreams, want 1", n)
	}
	if h.count("initialize") != 1 || h.count("server/discover") != 1 {
		t.Fatalf("the start was not probed once: %v", h.sent)
	}
	for _, f := range h.framesOf("tools/list") {
		if strings.Contains(f, `/clientCapabilities":{}`) {
			continue // the other client's own request
		}
		if !strings.Contains(f, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"roots":{},"sampling":{}}`) {
			t.Fatalf("catalog fetch without the shared capabilities: %s", f)
		}
	}
	changed := false
	for !changed {
		changed = legacy.next()["method"] == "notifications/tools/list_changed"
	}
	m = modern.next()
	if m["method"] != "notifications/tools/list_changed" || !strings.Contains(m["_text"].(string), `"io.modelcontextprotocol/subscriptionId":"l"`) {
		t.Fatalf("modern client's listen: %s", m["_text"])
	}
	select {
	case c := <-got:
		if len(c.Lists["tools/list"]) != 3 || c.Discover == nil {
			t.Fatalf("recorded after the start: %+v", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the started upstream's catalog was not recorded")
	}
}

// The 2026-07-28 caching rules are the server's own: a list whose results
// are stale at once (ttlMs 0) is not held, so a client's request for it
// starts the upstream; a catalog whose DiscoverResult's ttlMs ran out does
// not seed a router; one whose lists' ttlMs ran out after seeding answers
// them no more.
func TestModernCatalogFreshness(t *testing.T) {
	cat := record(t, modernCatalogServer(0, "alpha"))
	if _, held := cat.Lists["tools/list"]; held {
		t.Fatalf("a tools/list of ttlMs 0 was catalogued: %s", cat.Lists["tools/list"])
	}
	h := newHarness(t, modernCatalogServer(0, "alpha"), Options{})
	if !h.r.Seed(cat) {
		t.Fatal("seed refused")
	}
	rc := h.raw()
	rc.send(sharedInit)
	rc.response()
	rc.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	if m := rc.response(); !strings.Contains(m["_text"].(string), `"alpha"`) || h.startCount() != 1 {
		t.Fatalf("tools/list of ttlMs 0: %s, %d starts", m["_text"], h.startCount())
	}

	fresh := record(t, modernCatalogServer(60_000, "alpha"))
	stale := fresh
	stale.Fetched = time.Now().Add(-2 * time.Hour)
	if New(Options{}).Seed(stale) {
		t.Fatal("seeded with a DiscoverResult older than its ttlMs")
	}
	listsStale := fresh
	listsStale.Fetched = time.Now().Add(-2 * time.Minute) // discover fresh (1h), tools not (1m)
	h2 := newHarness(t, modernCatalogServer(60_000, "alpha"), Options{})
	if !h2.r.Seed(listsStale) {
		t.Fatal("seed refused")
	}
	rc2 := h2.raw()
	rc2.send(sharedInit)
	rc2.response()
	if h2.startCount() != 0 {
		t.Fatal("initialize started the upstream")
	}
	rc2.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	rc2.response()
	if h2.startCount() != 1 {
		t.Fatalf("a stale list was answered from the catalog (%d starts)", h2.startCount())
	}
}

// A ready modern upstream is carried with its DiscoverResult: the router
// handing it over cancels its own listens on it, the adopting one opens
// its own and serves a legacy client's initialize from the carried
// DiscoverResult, sending the upstream neither initialize nor discover;
// a list change the upstream announces after reaches the new clients.
func TestCarriedModernUpstream(t *testing.T) {
	ts := newModernServer()
	h := newHarness(t, ts.srv, Options{})
	rc := h.raw()
	rc.initialize()
	waitFor(t, func() bool { return h.count("subscriptions/listen") == 1 })
	c, err := h.r.Carry()
	if err != nil {
		t.Fatal(err)
	}
	if c.Discover == nil || c.InitResult != nil {
		t.Fatalf("carried %+v", c)
	}
	waitFor(t, func() bool { return h.count("notifications/cancelled") == 1 })
	listen := h.framesOf("subscriptions/listen")[0]
	var l struct{ ID json.RawMessage }
	json.Unmarshal([]byte(listen), &l)
	if cancel := h.framesOf("notifications/cancelled")[0]; !strings.Contains(cancel, `"requestId":`+string(l.ID)) {
		t.Fatalf("cancelled %s, the listen was %s", cancel, listen)
	}
	heir, frames := adopted(t, Options{Name: "testserver"}, c)
	waitFor(t, func() bool { return strings.Contains(frames(), `"subscriptions/listen"`) })
	var listenID struct{ ID int64 }
	for _, f := range strings.Split(frames(), "\n") {
		if strings.Contains(f, `"subscriptions/listen"`) {
			json.Unmarshal([]byte(f), &listenID)
		}
	}
	if listenID.ID <= c.NextID {
		t.Fatalf("the heir's listen reuses an id of the old daemon's: %d (next was %d)", listenID.ID, c.NextID)
	}
	rc2 := &rawClient{t: t, frames: make(chan string, 256)}
	rc2.c = heir.Attach(chanPeer(rc2.frames), nil)
	rc2.send(strings.Replace(initReq, "%s", "0", 1))
	m := rc2.response()
	if res, _ := m["result"].(map[string]any); res == nil || res["instructions"] != "a server of the router's tests" {
		t.Fatalf("initialize after the hand-over: %s", m["_text"])
	}
	if f := frames(); strings.Contains(f, `"initialize"`) || strings.Contains(f, `"server/discover"`) {
		t.Fatalf("the adopted upstream was sent: %s", f)
	}
	// The upstream announces a change on the heir's listen.
	heir.FromUpstream([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + strconv.FormatInt(listenID.ID, 10) + `}}}`))
	if m := rc2.next(); m["method"] != "notifications/tools/list_changed" || strings.Contains(m["_text"].(string), "subscriptionId") {
		t.Fatalf("list change after the hand-over: %s", m["_text"])
	}
	if _, err := New(Options{}).Carry(); !errors.Is(err, ErrNotCarried) {
		t.Fatalf("carried with no upstream: %v", err)
	}
}

// Bad catalogs of a modern upstream: a DiscoverResult that names no
// 2026-07-28 or has no capabilities object is not seeded; a page whose
// ttlMs is no positive integer makes its list stale at once (not held).
func TestModernCatalogBadInput(t *testing.T) {
	params := json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":` + sharedCaps + `}`)
	for _, d := range []string{
		`{"supportedVersions":["2025-11-25"],"capabilities":{}}`,
		`{"supportedVersions":["2026-07-28"],"capabilities":[]}`,
		`{"supportedVersions":"2026-07-28","capabilities":{}}`,
		`[]`,
	} {
		if New(Options{}).Seed(Catalog{InitParams: params, Discover: json.RawMessage(d), DiscoverTTL: time.Hour, Fetched: time.Now()}) {
			t.Errorf("seeded with the DiscoverResult %s", d)
		}
	}
	for _, page := range []string{`{"tools":[]}`, `{"tools":[],"ttlMs":0}`, `{"tools":[],"ttlMs":-5}`, `{"tools":[],"ttlMs":"soon"}`, `{"tools":[],"ttlMs":1.5}`, `[]`} {
		if d, ok := freshFor(json.RawMessage(page)); ok {
			t.Errorf("%s: fresh for %v", page, d)
		}
	}
	if d, ok := freshFor(json.RawMessage(`{"tools":[],"ttlMs":1500}`)); !ok || d != 1500*time.Millisecond {
		t.Errorf("ttlMs 1500: %v %v", d, ok)
	}
}
