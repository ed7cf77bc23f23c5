package route

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// catalogServer is a go-sdk server listing the named tools, one a page.
func catalogServer(tools ...string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "catalogued", Version: "1.0.0"}, &mcp.ServerOptions{PageSize: 1})
	for _, name := range tools {
		mcp.AddTool(srv, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "called " + name}}}, nil, nil
		})
	}
	return srv
}

// record runs a router on srv until it has recorded the server's catalog.
func record(t *testing.T, srv *mcp.Server) Catalog {
	t.Helper()
	return recordAfter(t, srv, strings.Replace(initReq, "%s", "0", 1))
}

// recordAfter is record with the first client's initialize init.
func recordAfter(t *testing.T, srv *mcp.Server, init string) Catalog {
	t.Helper()
	got := make(chan Catalog, 4)
	h := newHarness(t, srv, Options{Record: func(c Catalog) { got <- c }})
	rc := h.raw()
	rc.send(init)
	if m := rc.response(); m["result"] == nil {
		t.Fatalf("initialize: %s", m["_text"])
	}
	rc.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	select {
	case c := <-got:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no catalog recorded")
		return Catalog{}
	}
}

// A router seeded with a catalog answers initialize, the discover probe,
// setLevel and every page of tools/list without an upstream; the first
// tool call starts one, and when the started server lists other tools its
// clients are told (tools/list_changed) and the new lists recorded.
func TestCatalogAnswersWithoutUpstreamAndTellsOfChanges(t *testing.T) {
	cat := record(t, catalogServer("alpha", "beta"))
	if n := len(cat.Lists["tools/list"]); n != 2 {
		t.Fatalf("recorded %d pages of tools, want 2: %s", n, cat.Lists["tools/list"])
	}
	got := make(chan Catalog, 4)
	h := newHarness(t, catalogServer("alpha", "beta", "gamma"), Options{Record: func(c Catalog) { got <- c }})
	if !h.r.Seed(cat) {
		t.Fatal("a new shared router refused its catalog")
	}
	rc := h.raw()
	rc.initialize()
	rc.send(`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{}}`)
	if m := rc.response(); m["error"] == nil {
		t.Fatalf("discover probe: %s", m["_text"])
	}
	rc.send(`{"jsonrpc":"2.0","id":"l","method":"logging/setLevel","params":{"level":"debug"}}`)
	if m := rc.response(); m["result"] == nil {
		t.Fatalf("setLevel: %s", m["_text"])
	}
	rc.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	m := rc.response()
	res, _ := m["result"].(map[string]any)
	cursor, _ := res["nextCursor"].(string)
	if cursor == "" || !strings.Contains(m["_text"].(string), `"alpha"`) {
		t.Fatalf("first page: %s", m["_text"])
	}
	rc.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":` + string(mustJSON(cursor)) + `}}`)
	if m := rc.response(); !strings.Contains(m["_text"].(string), `"beta"`) {
		t.Fatalf("second page: %s", m["_text"])
	}
	h.mu.Lock()
	starts := h.starts
	h.mu.Unlock()
	if starts != 0 {
		t.Fatalf("%d upstreams started for initialize and lists the catalog holds", starts)
	}
	rc.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"alpha","arguments":{}}}`)
	changed, answered := false, false
	for !changed || !answered {
		m := rc.next()
		switch {
		case m["method"] == "notifications/tools/list_changed":
			changed = true
		case m["method"] == nil:
			if !strings.Contains(m["_text"].(string), "called alpha") {
				t.Fatalf("call: %s", m["_text"])
			}
			answered = true
		}
	}
	select {
	case c := <-got:
		if n := len(c.Lists["tools/list"]); n != 3 {
			t.Fatalf("recorded %d pages after the change, want 3", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the started server's lists were not recorded")
	}
	// The level the client set while nothing ran reached the upstream.
	if h.count("logging/setLevel") != 1 {
		t.Fatalf("setLevel sent %d times", h.count("logging/setLevel"))
	}
}

// When the started server lists what the catalog held, clients hear of no
// change.
func TestCatalogSameListsNoChange(t *testing.T) {
	cat := record(t, catalogServer("alpha"))
	got := make(chan Catalog, 4)
	h := newHarness(t, catalogServer("alpha"), Options{Record: func(c Catalog) { got <- c }})
	h.r.Seed(cat)
	rc := h.raw()
	rc.initialize()
	rc.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"alpha","arguments":{}}}`)
	if m := rc.next(); m["method"] != nil {
		t.Fatalf("got %s before the call's answer", m["_text"])
	}
	<-got
	rc.quiet(100 * time.Millisecond)
}

// A positive ttlMs is recorded as the catalog's TTL; a 0 (the Go SDK's
// default in every list result, chosen by no server) is no declaration.
func TestCatalogTTL(t *testing.T) {
	for _, tc := range []struct {
		page string
		want time.Duration
	}{
		{`{"tools":[],"ttlMs":0,"cacheScope":"public"}`, 0},
		{`{"tools":[],"ttlMs":5000,"cacheScope":"private"}`, 5 * time.Second},
		{`{"tools":[]}`, 0},
		{`{"tools":[],"ttlMs":"soon"}`, 0},
	} {
		got := make(chan Catalog, 1)
		r := New(Options{Record: func(c Catalog) { got <- c }})
		r.mu.Lock()
		r.catalogFetched(&catalogFetch{pages: map[string][]json.RawMessage{"tools/list": {json.RawMessage(tc.page)}}, failed: map[string]bool{}})
		answers := r.cat.answers
		r.unlock()
		if c := <-got; c.TTL != tc.want || !answers {
			t.Errorf("%s: ttl %v, answered from %v; want %v", tc.page, c.TTL, answers, tc.want)
		}
	}
}

// A cursor holding control characters (U+0001, a bell) is sent back to the
// upstream as JSON, quoted as encoding/json quotes (not as Go quotes, whose
// \x01 and \a are no JSON escapes): the page after it is fetched, and the
// catalog recorded whole.
func TestCatalogCursorWithControlCharacters(t *testing.T) {
	got := make(chan Catalog, 1)
	var r *Router
	cursor := "page\x01two\a"
	upstream := WriteFunc(func(f []byte) error {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor *string `json:"cursor"`
			} `json:"params"`
		}
		if err := json.Unmarshal(f, &m); err != nil {
			t.Errorf("the router sent no JSON: %v: %q", err, f)
			return nil
		}
		var body string
		switch {
		case m.Method == "initialize":
			body = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"c","version":"1"}}`
		case m.Method == "tools/list" && m.Params.Cursor == nil:
			body = `{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"page\u0001two\u0007"}`
		case m.Method == "tools/list" && *m.Params.Cursor == cursor:
			body = `{"tools":[{"name":"b","inputSchema":{"type":"object"}}]}`
		case m.Method == "tools/list":
			t.Errorf("cursor %q, want %q", *m.Params.Cursor, cursor)
			return nil
		default:
			return nil
		}
		go r.FromUpstream([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + body + `}`))
		return nil
	})
	r = New(Options{Name: "cursors", Record: func(c Catalog) { got <- c }, Wake: func() { go r.Up(upstream) }})
	frames := make(chan string, 8)
	c := r.Attach(chanPeer(frames), nil)
	c.Handle([]byte(strings.Replace(initReq, "%s", "0", 1)))
	select {
	case cat := <-got:
		if pages := cat.Lists["tools/list"]; len(pages) != 2 || !strings.Contains(string(pages[1]), `"name":"b"`) {
			t.Fatalf("recorded %s, want the pages of a and of b", pages)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no catalog recorded")
	}
}
