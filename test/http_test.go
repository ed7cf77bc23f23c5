//go:build unix

package test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpDaemon is a `hearthd serve` that also serves Streamable HTTP.
type httpDaemon struct {
	*daemonProc
	url, token, tokenFile string
}

// startHTTPDaemon starts hearthd serve with HEARTH_HTTP_LISTEN on a free
// loopback port and reads the endpoint and the token file from its
// mcp:http line.
func startHTTPDaemon(t *testing.T, extraEnv ...string) *httpDaemon {
	t.Helper()
	return httpOf(t, startDaemon(t, append([]string{"HEARTH_HTTP_LISTEN=127.0.0.1:0"}, extraEnv...)...))
}

// httpOf reads a daemon's HTTP endpoint and token file from its mcp:http
// line.
func httpOf(t *testing.T, d *daemonProc) *httpDaemon {
	t.Helper()
	h := &httpDaemon{daemonProc: d}
	// The daemon logs mcp:http before its readiness file, but its stderr
	// reaches d.stderr through a goroutine of exec that may not have
	// copied the line yet: wait for it.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(d.stderr.String(), "mcp:http url=") && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	for _, line := range strings.Split(d.stderr.String(), "\n") {
		if !strings.Contains(line, "mcp:http url=") {
			continue
		}
		var rec struct {
			URL, Auth string
			TokenFile string `json:"token_file"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("mcp:http line %q: %v", line, err)
		}
		h.url, h.tokenFile = rec.URL, rec.TokenFile
		if rec.Auth == "token" {
			b, err := os.ReadFile(rec.TokenFile)
			if err != nil {
				t.Fatal(err)
			}
			h.token = strings.TrimSpace(string(b))
		}
	}
	if h.url == "" {
		t.Fatalf("no mcp:http line before readiness:\n%s", d.stderr.String())
	}
	return h
}

// bearer adds the token to every request of a Go SDK client.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTPGoSDK: the Go SDK's streamable client, through the token, gets
// what every endpoint gives it; the session shows in daemon_status as an
// http client; DELETE on close ends it.
func TestHTTPGoSDK(t *testing.T) {
	d := startHTTPDaemon(t)
	fi, err := os.Stat(d.tokenFile)
	if err != nil || fi.Mode().Perm() != 0o600 || len(d.token) < 32 {
		t.Fatalf("token file %s: %v, mode %v, token %d characters", d.tokenFile, err, fi.Mode(), len(d.token))
	}
	transport := &mcp.StreamableClientTransport{Endpoint: d.url, HTTPClient: &http.Client{Transport: bearer{d.token}}}
	exerciseSession(t, transport, "socket")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-http-go", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.url, HTTPClient: &http.Client{Transport: bearer{d.token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := callTool(t, cs, "daemon_status", map[string]any{})
	st := res.StructuredContent.(map[string]any)
	web, _ := st["http"].(map[string]any)
	if web["url"] != d.url || web["auth"] != "token" || web["token_file"] != d.tokenFile {
		t.Fatalf("daemon_status http: %v", st["http"])
	}
	found := false
	for _, c := range st["clients"].([]any) {
		c := c.(map[string]any)
		found = found || (c["transport"] == "http" && c["name"] == "e2e-http-go")
	}
	if !found {
		t.Fatalf("daemon_status does not list the HTTP session: %v", st["clients"])
	}
	cs.Close()

	// Without the token: 401 and nothing else.
	_, err = mcp.NewClient(&mcp.Implementation{Name: "no-token", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.url}, nil)
	if err == nil || !strings.Contains(err.Error(), "Unauthorized") && !strings.Contains(err.Error(), "401") {
		t.Fatalf("connecting without the token: %v", err)
	}
	d.stop(t)
}

// httpSummary is what httpclient.mjs prints.
type httpSummary struct {
	Era, ProtocolVersion string
	SessionID            *string
	Tools                []string
	Calls                map[string]v2Result
	Build                v2Result
	Progress             []float64
	Cancelled            string
	CancelMs             float64
	After                v2Result
}

// TestHTTPTypeScriptSDK: the TypeScript SDK's Streamable HTTP clients, v1
// (a 2025 session) and v2 pinned to 2026-07-28 (stateless), call a tool of
// every family, follow a build's progress, and cancel a build; the daemon
// sees the cancelled call end.
func TestHTTPTypeScriptSDK(t *testing.T) {
	needV2Client(t)
	src := goSrc(t)
	d := startHTTPDaemon(t)
	for _, sdk := range []string{"v1", "v2"} {
		t.Run(sdk, func(t *testing.T) {
			before := toolErrors(t, d.socket, "index_build")
			out := runNodeScript(t, append(os.Environ(), "HEARTH_E2E_REPO="+src), "httpclient.mjs", sdk, d.url, d.token)
			var got httpSummary
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("httpclient output %q: %v", out, err)
			}
			wantEra, wantVersion := "legacy", "2025-11-25"
			if sdk == "v2" {
				wantEra, wantVersion = "modern", "2026-07-28"
			}
			if got.Era != wantEra || got.ProtocolVersion != wantVersion || (got.SessionID != nil) != (sdk == "v1") {
				t.Fatalf("era %q, version %q, session %v", got.Era, got.ProtocolVersion, got.SessionID)
			}
			sameTools(t, sdk+" over HTTP", got.Tools, got.Calls["status"].Structured)
			for name, r := range got.Calls {
				if (name == "bad") != r.IsError {
					t.Fatalf("%s: %+v", name, r)
				}
			}
			if got.Calls["bad"].Structured["code"] != "INVALID_REQUEST" || got.Calls["validate"].Structured["ok"] != false {
				t.Fatalf("bad %+v, validate %+v", got.Calls["bad"], got.Calls["validate"])
			}
			if got.Build.IsError || len(got.Progress) < 2 {
				t.Fatalf("build %+v with %d progress notifications", got.Build, len(got.Progress))
			}
			if got.Cancelled == "not cancelled" || got.After.IsError {
				t.Fatalf("cancellation: %q, then %+v", got.Cancelled, got.After)
			}
			// The cancelled build ended in the daemon, long before a full
			// build would have.
			deadline := time.Now().Add(20 * time.Second)
			for toolErrors(t, d.socket, "index_build") <= before {
				if time.Now().After(deadline) {
					t.Fatalf("the cancelled build did not end in the daemon")
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

// toolErrors asks daemon_status over the socket how many calls of a tool
// failed (cancelled calls among them).
func toolErrors(t *testing.T, socket, name string) float64 {
	t.Helper()
	c := dialRaw(t, socket)
	defer c.c.Close()
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"daemon_status","arguments":{}}}`)
	var reply struct {
		Result struct {
			StructuredContent struct {
				Tools []struct {
					Name   string
					Errors float64
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(c.recv()), &reply); err != nil {
		t.Fatal(err)
	}
	for _, tl := range reply.Result.StructuredContent.Tools {
		if tl.Name == name {
			return tl.Errors
		}
	}
	t.Fatalf("daemon_status lists no %s", name)
	return 0
}

// TestHTTPResumeWithLastEventID: a client whose stream of a running build
// is cut off resumes it with GET and Last-Event-ID and gets the progress it
// missed and the build's reply, once each.
func TestHTTPResumeWithLastEventID(t *testing.T) {
	src := goSrc(t)
	d := startHTTPDaemon(t)
	post := func(ctx context.Context, sid, body string) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, "POST", d.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+d.token)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := post(context.Background(), "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"resumer","version":"1"}}}`)
	sid := res.Header.Get("Mcp-Session-Id")
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	res = post(context.Background(), sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	res.Body.Close()

	ctx, cut := context.WithCancel(context.Background())
	res = post(ctx, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"index_build","arguments":{"repo_path":%q,"incremental":false},"_meta":{"progressToken":"p"}}}`, src))
	events := readSSE(res.Body)
	var lastID string
	var seen []string
	for ev := range events {
		lastID = ev.id
		seen = append(seen, ev.data)
		if strings.Contains(ev.data, "notifications/progress") {
			break // one progress report, then the connection is lost
		}
	}
	cut()
	res.Body.Close()
	if lastID == "" || len(seen) < 2 {
		t.Fatalf("before the cut: events %q, last id %q", seen, lastID)
	}

	req, _ := http.NewRequest("GET", d.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+d.token)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Last-Event-ID", lastID)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("resume: %v %v", err, res.Status)
	}
	defer res.Body.Close()
	var reply string
	progressAfter := 0
	for ev := range readSSE(res.Body) {
		for _, s := range seen {
			if ev.data == s && s != "" {
				t.Fatalf("event replayed twice: %s", s)
			}
		}
		if strings.Contains(ev.data, "notifications/progress") {
			progressAfter++
		}
		if strings.Contains(ev.data, `"id":"b"`) {
			reply = ev.data
		}
	}
	if reply == "" || strings.Contains(reply, `"isError":true`) || progressAfter == 0 {
		t.Fatalf("after resuming: reply %.300q, %d progress reports", reply, progressAfter)
	}
}

type sseEvent struct{ id, data string }

// readSSE yields a body's SSE events until it ends.
func readSSE(body io.Reader) <-chan sseEvent {
	out := make(chan sseEvent)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 4<<20), 4<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.id != "" || ev.data != "" {
					out <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	return out
}

// TestHTTPIdleConnectionsAndBadInput: a thousand idle connections and a
// burst of bad requests leave the socket's clients and HTTP clients served.
func TestHTTPIdleConnectionsAndBadInput(t *testing.T) {
	d := startHTTPDaemon(t)
	addr := strings.TrimSuffix(strings.TrimPrefix(d.url, "http://"), "/mcp")
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for i := 0; i < 1000; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		if i%2 == 0 {
			io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n") // a head never finished
		}
		idle = append(idle, c)
	}
	for _, bad := range []struct {
		method, body, host string
		status             int
	}{
		{"POST", "{", "", 401}, // no token: 401 before anything else
		{"PUT", "", "", 401},
		{"POST", "{", "evil.example.com", 403},
	} {
		req, _ := http.NewRequest(bad.method, d.url, strings.NewReader(bad.body))
		if bad.host != "" {
			req.Host = bad.host
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != bad.status {
			t.Fatalf("%s %s: %v %v, want %d", bad.method, bad.host, err, res, bad.status)
		}
		res.Body.Close()
	}
	// The socket still serves.
	c := dialRaw(t, d.socket)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if line := c.recv(); !strings.Contains(line, `"result"`) {
		t.Fatalf("socket ping: %s", line)
	}
	// And HTTP too.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "after-idle", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: d.url, HTTPClient: &http.Client{Transport: bearer{d.token}}}, nil)
	if err != nil {
		t.Fatalf("HTTP after a thousand idle connections: %v", err)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	cs.Close()
}

// TestHTTPListenRefusesNonLoopback: hearthd refuses at start to listen for
// HTTP anywhere but on the loopback interface.
func TestHTTPListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8765", "192.0.2.1:8765", "example.com:8765", ":8765", "127.0.0.1"} {
		runtime := shortTempDir(t)
		cmd := exec.Command(bin.hearthd, "serve")
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "HEARTH_HOME="+filepath.Join(runtime, "home"),
			"XDG_CONFIG_HOME="+filepath.Join(runtime, "config"), "HEARTH_HTTP_LISTEN="+addr)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "HEARTH_HTTP_LISTEN") {
			t.Fatalf("%s: %v\n%s", addr, err, out)
		}
	}
}

// TestHTTPConformance runs the official MCP conformance suite against the
// endpoint (http_auth = "none", as the suite sends no token): every server
// scenario that does not need the suite's own test tools, resources or
// prompts, in both eras (docs/protocol.md lists the ones left out and why).
func TestHTTPConformance(t *testing.T) {
	needNode(t)
	suite, _ := filepath.Abs(filepath.Join("conformance", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"))
	_, err := os.Stat(suite)
	needOrSkip(t, err == nil, "test/conformance/node_modules (npm ci in test/conformance)")
	node, err := node22Path()
	needOrSkip(t, err == nil, fmt.Sprintf("Node 22 (npx -y node@22: %v)", err))
	d := startHTTPDaemon(t, "HEARTH_HTTP_AUTH=none")
	for version, scenarios := range map[string][]string{
		"2025-11-25": {"server-initialize", "server-session-lifecycle", "ping", "tools-list", "logging-set-level",
			"dns-rebinding-protection", "server-sse-polling", "server-sse-multiple-streams", "resources-list"},
		"2026-07-28": {"tools-list", "http-header-validation", "dns-rebinding-protection", "server-sse-multiple-streams", "resources-list"},
	} {
		for _, sc := range scenarios {
			t.Run(version+"/"+sc, func(t *testing.T) {
				cmd := exec.Command(node, suite, "server", "--url", d.url, "--scenario", sc, "--spec-version", version)
				out, err := cmd.CombinedOutput()
				text := string(out)
				if err != nil || !strings.Contains(text, "Passed:") || !strings.Contains(text, " 0 failed") {
					t.Fatalf("conformance %s at %s: %v\n%s", sc, version, err, text)
				}
			})
		}
	}
}

// TestHTTPHostedServer: a server of the config's [servers] is reached at
// /servers/NAME/mcp by the Go SDK's streamable client, its frames relayed
// to the hosted instance; an unknown name is 404, and a session opened on
// one endpoint is not reached through another.
func TestHTTPHostedServer(t *testing.T) {
	dir := shortTempDir(t)
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[servers.echo]\ncommand = %q\nsharing = \"global\"\n", filepath.Join(bin.dir, "hostedserver"))), 0o600)
	d := startHTTPDaemon(t, "HEARTH_CONFIG="+cfg)
	base := strings.TrimSuffix(d.url, "/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-hosted", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + "/servers/echo/mcp", HTTPClient: &http.Client{Transport: bearer{d.token}}}, nil)
	if err != nil {
		t.Fatalf("connect to /servers/echo/mcp: %v\n%s", err, d.stderr.String())
	}
	defer cs.Close()
	if init := cs.InitializeResult(); init.ServerInfo.Name != "hostedserver" {
		t.Fatalf("initialize answered by %+v, not the hosted server", init.ServerInfo)
	}
	out, isErr := callText(t, cs, "echo", map[string]any{"text": "over-http"})
	if isErr || !strings.HasPrefix(out, "over-http pid=") {
		t.Fatalf("hosted echo over HTTP: %q", out)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if sid := cs.ID(); sid != "" {
		req, _ := http.NewRequest("POST", d.url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+d.token)
		req.Header.Set("Mcp-Session-Id", sid)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 404 {
			t.Fatalf("the hosted session reached through /mcp: %d", res.StatusCode)
		}
	}
	for _, path := range []string{"/servers/nope/mcp", "/servers/echo", "/servers//mcp", "/servers/echo/mcp/x"} {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+d.token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 404 || !strings.Contains(string(b), "Not Found") {
			t.Fatalf("%s: %d %s", path, res.StatusCode, b)
		}
	}
}
