package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/oauth"
)

// reader reads the Conn's Stdout as the instance's reader would.
type reader struct {
	t  *testing.T
	ch chan map[string]any
}

func readFrames(t *testing.T, c *Conn) *reader {
	r := &reader{t: t, ch: make(chan map[string]any, 100)}
	go func() {
		sc := bufio.NewScanner(c.Stdout())
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("a line of Stdout is not JSON: %q", sc.Bytes())
				continue
			}
			r.ch <- m
		}
		close(r.ch)
	}()
	return r
}

func (r *reader) next() map[string]any {
	r.t.Helper()
	select {
	case m, ok := <-r.ch:
		if !ok {
			r.t.Fatal("Stdout ended")
		}
		return m
	case <-time.After(10 * time.Second):
		r.t.Fatal("no frame within 10s")
	}
	return nil
}

// serve starts a test server that outlives the Conns of the test (their
// cleanups run first): an event stream it holds open ends with them.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func dial(t *testing.T, url string, auth Authorizer) (*Conn, *reader) {
	t.Helper()
	c, err := Dial(Options{URL: url, Name: "test-server", Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, readFrames(t, c)
}

func write(t *testing.T, c *Conn, s string) {
	t.Helper()
	if err := c.Write([]byte(s), ""); err != nil {
		t.Fatal(err)
	}
}

// legacyServer is a 2025 Streamable HTTP server: a session, JSON or SSE
// answers, a GET stream, resumption, DELETE.
type legacyServer struct {
	mu      sync.Mutex
	session string
	deleted bool
	gets    []string // Last-Event-ID of each GET
	headers []http.Header
	cut     bool        // cut the first SSE answer after its first event
	answers chan string // what the client answered to the server's request
}

func (s *legacyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.headers = append(s.headers, r.Header.Clone())
	s.mu.Unlock()
	switch r.Method {
	case "DELETE":
		s.mu.Lock()
		s.deleted = r.Header.Get("Mcp-Session-Id") == s.session
		s.mu.Unlock()
		w.WriteHeader(200)
		return
	case "GET":
		s.mu.Lock()
		s.gets = append(s.gets, r.Header.Get("Last-Event-ID"))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		if r.Header.Get("Last-Event-ID") == "e1" {
			// The rest of the cut stream.
			fmt.Fprint(w, "id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"resumed\":true}}\n\n")
			return
		}
		// The standing GET stream: a server-to-client request.
		fmt.Fprint(w, "id: g1\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"ping\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
	}
	json.Unmarshal(body, &m)
	if m.Method != "initialize" && r.Header.Get("Mcp-Session-Id") != s.session {
		http.Error(w, "unknown session", 404)
		return
	}
	switch {
	case m.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", s.session)
		w.Header().Set("Content-Type", "application/json")
		// Pretty-printed, as some servers answer: it must come out as one line.
		fmt.Fprintf(w, "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": %s,\n  \"result\": {\"protocolVersion\": \"2025-11-25\", \"capabilities\": {}, \"serverInfo\": {\"name\": \"s\", \"version\": \"1\"}}\n}", m.ID)
	case m.Method == "" && m.Result != nil:
		s.answers <- string(m.ID)
		w.WriteHeader(202)
	case m.Method == "notifications/initialized":
		w.WriteHeader(202)
	case m.Method == "tools/call":
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":1}}\n\n")
		if s.cut {
			return // the stream ends before the answer
		}
		fmt.Fprintf(w, "id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"ok\":true}}\n\n", m.ID)
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`, m.ID)
	}
}

func TestStreamable2025(t *testing.T) {
	s := &legacyServer{session: "sess-1", answers: make(chan string, 1)}
	srv := serve(t, s)
	c, r := dial(t, srv.URL+"/mcp", nil)
	write(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := r.next(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	if c.Session() != "sess-1" {
		t.Fatalf("session %q", c.Session())
	}
	write(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// The GET stream brings the server's ping; the answer is posted.
	if m := r.next(); m["method"] != "ping" || m["id"] != "s1" {
		t.Fatalf("from the GET stream: %v", m)
	}
	write(t, c, `{"jsonrpc":"2.0","id":"s1","result":{}}`)
	if got := <-s.answers; got != `"s1"` {
		t.Fatalf("answer posted for %s", got)
	}
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`)
	if m := r.next(); m["method"] != "notifications/progress" {
		t.Fatalf("progress first: %v", m)
	}
	if m := r.next(); m["id"] != float64(2) {
		t.Fatalf("call answer: %v", m)
	}
	// A stream cut before the answer is resumed from its last event.
	s.mu.Lock()
	s.cut = true
	s.mu.Unlock()
	write(t, c, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}`)
	r.next() // progress
	if m := r.next(); m["id"] != float64(3) || m["result"].(map[string]any)["resumed"] != true {
		t.Fatalf("resumed answer: %v", m)
	}
	// A request that carries 2026-07-28 _meta (a bridged client's, as
	// hearth forwards it) still goes in the session initialize opened.
	write(t, c, `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if m := r.next(); m["id"] != float64(4) || m["result"] == nil {
		t.Fatalf("a request with 2026-07-28 _meta in a 2025 session: %v", m)
	}
	s.mu.Lock()
	for _, h := range s.headers[1:] {
		if h.Get("MCP-Protocol-Version") != "2025-11-25" {
			t.Errorf("a request after initialize without the negotiated version: %v", h)
		}
		if h.Get("Mcp-Session-Id") != "sess-1" {
			t.Errorf("a request without the session: %v", h)
		}
	}
	gets := strings.Join(s.gets, ",")
	s.mu.Unlock()
	if !strings.Contains(gets, "e1") {
		t.Fatalf("no resumption with Last-Event-ID: %q", gets)
	}
	c.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.deleted {
		t.Fatal("no DELETE of the session at the end")
	}
}

// The server forgetting the session ends the Conn (the router then starts
// anew with initialize).
func TestSessionEnded(t *testing.T) {
	s := &legacyServer{session: "a", answers: make(chan string, 1)}
	srv := serve(t, s)
	c, r := dial(t, srv.URL, nil)
	write(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	r.next()
	s.mu.Lock()
	s.session = "b"
	s.mu.Unlock()
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if m := r.next(); m["error"] == nil {
		t.Fatalf("%v", m)
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the Conn did not end")
	}
	if c.Err() != ErrSessionEnded {
		t.Fatalf("err %v", c.Err())
	}
}

// 2026-07-28: each request's metadata mirrored in headers, no session, and
// a cancellation closes the request's stream instead of being sent.
func TestStreamableModern(t *testing.T) {
	var mu sync.Mutex
	var seen []http.Header
	var bodies []string
	cancelled := make(chan struct{})
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		bodies = append(bodies, string(body))
		mu.Unlock()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &m)
		if m.Method == "initialize" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"Missing MCP-Protocol-Version header"}}`)
			return
		}
		if m.Method == "tools/call" {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			close(cancelled)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete"}}`, m.ID)
	}))
	c, r := dial(t, srv.URL+"/mcp", nil)
	write(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	m := r.next()
	if e, _ := m["error"].(map[string]any); m["id"] != float64(1) || e["code"] != float64(-32020) {
		t.Fatalf("the refusal under the request's id: %v", m)
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{`+meta+`}}`)
	r.next()
	write(t, c, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"héllo",`+meta+`}}`)
	time.Sleep(100 * time.Millisecond)
	write(t, c, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled request's stream stayed open")
	}
	write(t, c, `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{`+meta+`}}`)
	if m := r.next(); m["id"] != float64(4) {
		t.Fatalf("after the cancel: %v (the cancelled request must get no answer)", m)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, b := range bodies {
		if strings.Contains(b, "notifications/cancelled") {
			t.Fatal("a 2026-07-28 cancellation was sent as a notification")
		}
		if i == 0 {
			continue
		}
		h := seen[i]
		if h.Get("MCP-Protocol-Version") != "2026-07-28" || h.Get("Mcp-Method") == "" || h.Get("Mcp-Session-Id") != "" {
			t.Errorf("request %d headers: %v", i, h)
		}
	}
	if got := seen[2].Get("Mcp-Name"); got != "=?base64?aMOpbGxv?=" {
		t.Errorf("Mcp-Name of a non-ASCII name: %q", got)
	}
}

// A server with only the 2024-11-05 transport: the POST is refused without
// a JSON-RPC error, the GET's first event names the endpoint.
func TestLegacySSEFallback(t *testing.T) {
	msgs := make(chan string, 10)
	mux := http.NewServeMux()
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "GET" {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: endpoint\ndata: /messages?sessionId=42\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case m := <-msgs:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", m)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	})
	mux.HandleFunc("/messages", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &m)
		w.WriteHeader(202)
		if m.ID != nil {
			msgs <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2024-11-05","method":%q}}`, m.ID, m.Method)
		}
	})
	srv := serve(t, mux)
	c, r := dial(t, srv.URL+"/sse", nil)
	write(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	if m := r.next(); m["id"] != float64(1) {
		t.Fatalf("%v", m)
	}
	write(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if m := r.next(); m["id"] != float64(2) || m["result"].(map[string]any)["method"] != "tools/list" {
		t.Fatalf("%v", m)
	}
}

// Bounded reads: an answer over the limit is an error answer, never
// buffered whole; something that is not JSON-RPC is too.
func TestBounded(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(string(body), "big") {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"x":"%s"}}`, strings.Repeat("a", 4096))
			return
		}
		if strings.Contains(string(body), "sse") {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", strings.Repeat("b", 4096))
			return
		}
		fmt.Fprint(w, `<html>hello</html>`)
	}))
	c, err := Dial(Options{URL: srv.URL, MaxMessage: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := readFrames(t, c)
	for i, method := range []string{"big", "sse", "html"} {
		write(t, c, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, i+1, method))
		m := r.next()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(CodeUnreachable) {
			t.Fatalf("%s: %v", method, m)
		}
	}
}

// fakeAuth accepts every challenge by handing out the next token.
type fakeAuth struct {
	mu         sync.Mutex
	n          int
	challenged int
}

func (a *fakeAuth) Token(context.Context) (oauth.Token, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return oauth.Token{Access: fmt.Sprintf("access-token-%d", a.n)}, nil
}

func (a *fakeAuth) Challenged(_ context.Context, _ oauth.Token, status int, h http.Header) (oauth.Token, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.challenged++
	a.n++
	return oauth.Token{Access: fmt.Sprintf("access-token-%d", a.n)}, nil
}

// A 401 goes to the Authorizer and the request is sent again with the new
// token; the token is sent on every request, never in the URL.
func TestUnauthorizedRetried(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer access-token-1" || strings.Contains(r.URL.RawQuery, "tok") {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="x"`)
			w.WriteHeader(401)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	a := &fakeAuth{}
	c, r := dial(t, srv.URL, a)
	write(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if m := r.next(); m["result"] == nil {
		t.Fatalf("%v", m)
	}
	if a.challenged != 1 {
		t.Fatalf("challenged %d times", a.challenged)
	}
}

// Stdin takes newline-delimited frames, as a child's stdin would.
func TestStdin(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct{ ID json.RawMessage }
		json.Unmarshal(body, &m)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
	}))
	c, r := dial(t, srv.URL, nil)
	in := c.Stdin()
	io.WriteString(in, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",")
	io.WriteString(in, "\"id\":2,\"method\":\"b\"}\n\n")
	got := map[float64]bool{}
	got[r.next()["id"].(float64)] = true
	got[r.next()["id"].(float64)] = true
	if !got[1] || !got[2] {
		t.Fatalf("%v", got)
	}
}

// A server's error text that repeats the credentials sent reaches the
// client without them.
func TestErrorsHoldNoCredential(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		fmt.Fprintf(w, "bad token %s and key %s", r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
	}))
	c, err := Dial(Options{URL: srv.URL, Header: http.Header{"X-Api-Key": {"static-key-123456"}}, Auth: &fakeAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := readFrames(t, c)
	write(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	msg := r.next()["error"].(map[string]any)["message"].(string)
	if strings.Contains(msg, "static-key-123456") || strings.Contains(msg, "access-token-0") || !strings.Contains(msg, "***") {
		t.Fatalf("%q", msg)
	}
}
