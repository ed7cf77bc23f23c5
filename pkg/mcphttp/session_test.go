package mcphttp

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// openLegacy initializes a 2025 session and returns its id.
func openLegacy(t *testing.T, url string) string {
	t.Helper()
	res, body := do(t, newReq(t, "POST", url, initBody, nil))
	id := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != 200 || id == "" || !strings.Contains(body, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %d %q %s", res.StatusCode, id, body)
	}
	res, _ = do(t, newReq(t, "POST", url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": id}))
	if res.StatusCode != 202 {
		t.Fatalf("initialized: %d", res.StatusCode)
	}
	return id
}

// sseEvents splits an SSE body into (id, data) pairs.
func sseEvents(body string) (ids, data []string) {
	for _, ev := range strings.Split(body, "\n\n") {
		var id, d string
		for _, line := range strings.Split(ev, "\n") {
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				id = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				d = v
			}
		}
		if id != "" || d != "" {
			ids, data = append(ids, id), append(data, d)
		}
	}
	return ids, data
}

// TestLegacyStreamResumes: a POST's stream is primed with an event id, and
// a GET with Last-Event-ID replays what followed it.
func TestLegacyStreamResumes(t *testing.T) {
	ts, _, _ := newTestServer(t, "")
	url := ts.URL + "/mcp"
	sid := openLegacy(t, url)
	res, body := do(t, newReq(t, "POST", url, `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		map[string]string{"Mcp-Session-Id": sid}))
	if res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q", res.Header.Get("Content-Type"))
	}
	ids, data := sseEvents(body)
	if len(ids) != 2 || data[0] != "" || !strings.Contains(data[1], `"id":"c1"`) {
		t.Fatalf("want a priming event then the reply, got ids %q data %q", ids, data)
	}
	// The client lost the stream after the priming event: it resumes.
	res, body = do(t, newReq(t, "GET", url, "", map[string]string{"Mcp-Session-Id": sid, "Last-Event-ID": ids[0]}))
	if res.StatusCode != 200 {
		t.Fatalf("resume: %d %s", res.StatusCode, body)
	}
	rids, rdata := sseEvents(body)
	if len(rids) != 1 || rids[0] != ids[1] || rdata[0] != data[1] {
		t.Fatalf("resume replayed ids %q data %q, want %q %q", rids, rdata, ids[1:], data[1:])
	}
	// An id the server never sent is refused.
	res, _ = do(t, newReq(t, "GET", url, "", map[string]string{"Mcp-Session-Id": sid, "Last-Event-ID": "999-1"}))
	if res.StatusCode != 404 {
		t.Fatalf("unknown stream: %d", res.StatusCode)
	}
	res, _ = do(t, newReq(t, "GET", url, "", map[string]string{"Mcp-Session-Id": sid, "Last-Event-ID": "garbage"}))
	if res.StatusCode != 400 {
		t.Fatalf("malformed Last-Event-ID: %d", res.StatusCode)
	}
}

// TestDuplicateIDInSession: a second request with the id of one still
// running is refused; the first is unaffected.
func TestDuplicateIDInSession(t *testing.T) {
	ts, _, events := newTestServer(t, "")
	url := ts.URL + "/mcp"
	sid := openLegacy(t, url)
	go func() {
		_, _ = http.DefaultClient.Do(newReq(t, "POST", url, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait"}}`, map[string]string{"Mcp-Session-Id": sid}))
	}()
	waitFor(t, events, "started")
	res, body := do(t, newReq(t, "POST", url, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}}`, map[string]string{"Mcp-Session-Id": sid}))
	if res.StatusCode != 409 || !strings.Contains(body, "DUPLICATE_ID") {
		t.Fatalf("duplicate: %d %s", res.StatusCode, body)
	}
	do(t, newReq(t, "DELETE", url, "", map[string]string{"Mcp-Session-Id": sid}))
	waitFor(t, events, "cancelled")
}

// TestDeleteCancelsCalls: DELETE ends the session and cancels what runs.
func TestDeleteCancelsCalls(t *testing.T) {
	ts, h, events := newTestServer(t, "")
	url := ts.URL + "/mcp"
	sid := openLegacy(t, url)
	go func() {
		_, _ = http.DefaultClient.Do(newReq(t, "POST", url, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"wait"}}`, map[string]string{"Mcp-Session-Id": sid}))
	}()
	waitFor(t, events, "started")
	res, _ := do(t, newReq(t, "DELETE", url, "", map[string]string{"Mcp-Session-Id": sid}))
	if res.StatusCode != 204 {
		t.Fatalf("DELETE: %d", res.StatusCode)
	}
	waitFor(t, events, "cancelled")
	if n := h.Sessions(); n != 0 {
		t.Fatalf("%d sessions left after DELETE", n)
	}
	res, _ = do(t, newReq(t, "POST", url, `{"jsonrpc":"2.0","id":10,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": sid}))
	if res.StatusCode != 404 {
		t.Fatalf("POST to a deleted session: %d", res.StatusCode)
	}
}

// TestModernDropCancels: a 2026-07-28 client closing its connection cancels
// the call it made.
func TestModernDropCancels(t *testing.T) {
	ts, _, events := newTestServer(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	req := newReq(t, "POST", ts.URL+"/mcp", modernBody("tools/call", `"name":"wait"`),
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "wait"}).WithContext(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	waitFor(t, events, "started")
	cancel()
	waitFor(t, events, "cancelled")
	<-done
}

func waitFor(t *testing.T, events chan string, want string) {
	t.Helper()
	select {
	case got := <-events:
		if got != want {
			t.Fatalf("event %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no %q within 10s", want)
	}
}

// TestJSONReplyWhenSessionEnds: a request waiting for a JSON reply whose
// session is deleted meanwhile gets a 503 that says so, not an empty 200.
func TestJSONReplyWhenSessionEnds(t *testing.T) {
	ts, _, events := newTestServer(t, "")
	url := ts.URL + "/mcp"
	sid := openLegacy(t, url)
	type result struct {
		status int
		body   string
	}
	got := make(chan result, 1)
	go func() {
		res, body := do(t, newReq(t, "POST", url, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"wait"}}`,
			map[string]string{"Mcp-Session-Id": sid, "Accept": "application/json"}))
		got <- result{res.StatusCode, body}
	}()
	waitFor(t, events, "started")
	do(t, newReq(t, "DELETE", url, "", map[string]string{"Mcp-Session-Id": sid}))
	select {
	case r := <-got:
		if r.status != 503 || !strings.Contains(r.body, "session ended") {
			t.Fatalf("JSON reply after DELETE: %d %s", r.status, r.body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting POST was not answered")
	}
}
