//go:build unix

package test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stateless era (MCP 2026-07-28) end to end: the TypeScript SDK v2
// client pinned to it and the Go SDK client in its default mode (which
// opens with server/discover), through the shim and through hearthd stdio,
// beside a legacy client (TypeScript SDK v1) on the same daemon.

// eraUser is a user whose config file points the schema catalog at a
// directory the test changes; SIGHUP then changes the resources.
type eraUser struct {
	home, schemas string
	runtime       string // XDG_RUNTIME_DIR of the clients that start its daemon
}

// env is the user's environment with a private runtime directory, so a
// daemon it starts never takes the machine's default socket.
func (u eraUser) env(extra ...string) []string {
	return append(append(cleanEnv(u.home), "XDG_RUNTIME_DIR="+u.runtime), extra...)
}

// startDaemon starts the user's socket daemon through a shim (in the
// private runtime directory); clients with any environment then find it
// through the data directory.
func (u eraUser) startDaemon(t *testing.T) {
	t.Helper()
	cs := shimSession(t, u.env())
	if res := callTool(t, cs, "daemon_status", map[string]any{}); res.IsError || len(daemonsIn(u.runtime)) != 1 {
		t.Fatalf("the user's daemon: %+v; daemons in %s: %v", res.StructuredContent, u.runtime, daemonsIn(u.runtime))
	}
	cs.Close()
}

func newEraUser(t *testing.T) eraUser {
	t.Helper()
	u := eraUser{home: shortTempDir(t), schemas: t.TempDir(), runtime: shortTempDir(t)}
	if err := os.WriteFile(filepath.Join(u.schemas, "a.schema.json"), []byte(`{"type":"object","required":["x"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(u.home, ".config", "hearth", "config.toml")
	os.MkdirAll(filepath.Dir(conf), 0o700)
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("schemas_dir = %q\n", u.schemas)), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killDaemonsIn(u.runtime); killDaemonsOfHome(u.home) })
	return u
}

// change adds a schema: the next reload changes the resource list.
func (u eraUser) change(t *testing.T) {
	t.Helper()
	name := fmt.Sprintf("n%d.schema.json", time.Now().UnixNano())
	if err := os.WriteFile(filepath.Join(u.schemas, name), []byte(`{"type":"string"}`), 0o644); err != nil {
		t.Fatal(err)
	}
}

// hangUpHearthds sends SIGHUP to every hearthd whose HOME is home.
func hangUpHearthds(t *testing.T, home string) {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); exe != bin.hearthd {
			continue
		}
		environ, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if bytes.Contains(environ, []byte("\x00HOME="+home+"\x00")) || bytes.HasPrefix(environ, []byte("HOME="+home+"\x00")) {
			syscall.Kill(pid, syscall.SIGHUP)
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no hearthd of %s to send SIGHUP to", home)
	}
}

// waitNoWorkers waits until no process mentions dir (an index worker).
func waitNoWorkers(t *testing.T, dir string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for len(processesMentioning(dir)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if w := processesMentioning(dir); len(w) > 0 {
		t.Fatalf("index workers alive %v after the cancellation: %v", within, w)
	}
}

// modernSummary is what modern.mjs reports.
type modernSummary struct {
	Era, Version string
	Discover     struct {
		SupportedVersions []string
		ResultType        string
	}
	Tools                                                    []string
	Status, Validate, Add, Found, Build, Search, Arch, After v2Result
	Progress                                                 []float64
	Cancelled                                                string
	Changed                                                  []string
}

// runModernTS runs modern.mjs against command: it signals the daemon (by
// sighup) once the client has subscribed, and returns the summary.
func runModernTS(t *testing.T, env []string, sighup func(), command ...string) modernSummary {
	t.Helper()
	node := needNode(t)
	needV2Client(t)
	script, _ := filepath.Abs(filepath.Join("ts", "modern.mjs"))
	cmd := exec.Command(node, append([]string{script}, command...)...)
	cmd.Env = env
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var got modernSummary
	for sc.Scan() {
		var step struct {
			Step   string
			At, MS float64
		}
		json.Unmarshal(sc.Bytes(), &step)
		t.Logf("modern client: %s after %v ms", step.Step, step.At+step.MS)
		switch step.Step {
		case "subscribed":
			sighup()
		case "done":
			if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
				t.Fatalf("modern.mjs said %s: %v", sc.Text(), err)
			}
		}
	}
	if err := cmd.Wait(); err != nil || got.Era == "" {
		t.Fatalf("modern.mjs: %v\n%s", err, stderr.String())
	}
	return got
}

// checkModernRun checks what every hearth endpoint must give a modern client.
func checkModernRun(t *testing.T, got modernSummary, wantMode string) {
	t.Helper()
	t.Logf("modern client: era %s, version %s, progress %v, cancelled %q, changed %v", got.Era, got.Version, got.Progress, got.Cancelled, got.Changed)
	if got.Era != "modern" || got.Version != "2026-07-28" || got.Discover.ResultType != "complete" ||
		len(got.Discover.SupportedVersions) == 0 || got.Discover.SupportedVersions[0] != "2026-07-28" {
		t.Fatalf("negotiation: era %q version %q discover %+v", got.Era, got.Version, got.Discover)
	}
	if st := got.Status; st.IsError || st.Structured["mode"] != wantMode {
		t.Fatalf("daemon_status: %+v", st)
	}
	sameTools(t, "the modern client's tools/list", got.Tools, got.Status.Structured)
	if v := got.Validate; v.IsError || v.Structured["ok"] != false {
		t.Fatalf("validate_asset: %+v", v)
	}
	if got.Add.IsError || got.Found.IsError || !strings.Contains(fmt.Sprint(got.Found.Structured), "zebras") {
		t.Fatalf("memory: add %+v, search %+v", got.Add, got.Found)
	}
	if got.Build.IsError || got.Build.Structured["files"] != 3.0 || got.Search.IsError || !strings.Contains(fmt.Sprint(got.Search.Structured), "greet.go") {
		t.Fatalf("workspace: build %+v, search %+v", got.Build, got.Search)
	}
	if got.Arch.IsError {
		t.Fatalf("read_architecture: %+v", got.Arch)
	}
	if len(got.Progress) == 0 || got.Cancelled == "completed" || got.After.IsError {
		t.Fatalf("the cancelled build: progress %v, outcome %q, a call after %+v", got.Progress, got.Cancelled, got.After)
	}
	if len(got.Changed) == 0 || got.Changed[0] != "resources" {
		t.Fatalf("list changes heard: %v", got.Changed)
	}
}

// errorsOf is daemon_status's error count.
func errorsOf(t *testing.T, status map[string]any) float64 {
	t.Helper()
	for _, k := range []string{"errors", "error_count"} {
		if v, ok := status[k].(float64); ok {
			return v
		}
	}
	if c, ok := status["counters"].(map[string]any); ok {
		if v, ok := c["errors"].(float64); ok {
			return v
		}
	}
	t.Fatalf("daemon_status has no error count: %v", status)
	return 0
}

// TestModernTypeScriptThroughShim: a TypeScript SDK v2 client pinned to
// 2026-07-28 and a TypeScript SDK v1 (legacy) client use one daemon through
// shims at the same time; the modern session costs no error.
func TestModernTypeScriptThroughShim(t *testing.T) {
	needV2Client(t)
	u := newEraUser(t)
	repo := gitRepo(t)
	big := bigTree(t)
	u.startDaemon(t)
	legacy := startTSRepl(t, cleanEnv(u.home), u.home, bin.hearth)
	before := legacy.call("daemon_status", map[string]any{})
	index := filepath.Join(u.home, ".local", "share", "hearth", "index")

	env := u.env("REPO="+repo, "BIG="+big)
	got := runModernTS(t, env, func() {
		waitNoWorkers(t, index, 5*time.Second) // the cancelled build's worker is gone
		// The legacy client is served meanwhile.
		if v := legacy.call("validate_asset", map[string]any{"schema": "a", "asset": map[string]any{"x": 1}}); v["ok"] != true {
			t.Errorf("the legacy client's validate_asset: %v", v)
		}
		u.change(t)
		hangUpHearthds(t, u.home)
	}, bin.hearth)
	checkModernRun(t, got, "socket")

	after := legacy.call("daemon_status", map[string]any{})
	if after["pid"] != before["pid"] {
		t.Fatalf("the clients reached different daemons: %v and %v", before["pid"], after["pid"])
	}
	if b, a := errorsOf(t, before), errorsOf(t, after); a != b {
		t.Fatalf("the modern session counted %v errors", a-b)
	}
}

// TestModernTypeScriptOverStdio: the pinned v2 client starts hearthd stdio
// itself, in a home nobody serves.
func TestModernTypeScriptOverStdio(t *testing.T) {
	needV2Client(t)
	u := newEraUser(t)
	repo := gitRepo(t)
	big := bigTree(t)
	env := append(cleanEnv(u.home), "REPO="+repo, "BIG="+big)
	index := filepath.Join(u.home, ".local", "share", "hearth", "index")
	got := runModernTS(t, env, func() {
		waitNoWorkers(t, index, 5*time.Second)
		u.change(t)
		hangUpHearthds(t, u.home)
	}, bin.hearthd, "stdio")
	checkModernRun(t, got, "stdio")
}

// goModern runs the same scenario with the Go SDK client in its default
// mode over transport, and reports the errors daemon_status counted during it.
func goModern(t *testing.T, u eraUser, connect func(*mcp.Client) *mcp.ClientSession, sighup func()) {
	t.Helper()
	repo := gitRepo(t)
	big := bigTree(t)
	var mu sync.Mutex
	var progress []float64
	changed := make(chan string, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-go-modern", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		},
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { changed <- "tools" },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- "resources" },
	})
	cs := connect(client)
	init := cs.InitializeResult()
	if init.ProtocolVersion != "2026-07-28" || init.ServerInfo == nil || init.ServerInfo.Name != "hearth" {
		t.Fatalf("the Go SDK did not go modern: %+v", init)
	}
	status := structured(t, callTool(t, cs, "daemon_status", map[string]any{}))
	var names []string
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	sameTools(t, "the Go SDK's tools/list", names, status)
	if v := structured(t, callTool(t, cs, "validate_asset", map[string]any{"schema": "a", "asset": map[string]any{}})); v["ok"] != false {
		t.Fatalf("validate_asset: %v", v)
	}
	callTool(t, cs, "add_memory", map[string]any{"text": "go remembers okapis"})
	if f := structured(t, callTool(t, cs, "search_memory", map[string]any{"query": "okapis"})); !strings.Contains(fmt.Sprint(f), "okapis") {
		t.Fatalf("search_memory: %v", f)
	}
	if b := structured(t, callTool(t, cs, "index_build", map[string]any{"repo_path": repo})); b["files"] != 3.0 {
		t.Fatalf("index_build: %v", b)
	}
	if s := structured(t, callTool(t, cs, "search", map[string]any{"repo_path": repo, "query": "greeting"})); !strings.Contains(fmt.Sprint(s), "greet.go") {
		t.Fatalf("search: %v", s)
	}
	if res := callTool(t, cs, "require_clarification", map[string]any{"user_intention": "fix the typo in the greeting", "repo_path": repo}); res.IsError {
		t.Fatalf("require_clarification: %+v", res.StructuredContent)
	}

	// A big build, cancelled once it reports progress.
	ctx, cancel := context.WithCancel(context.Background())
	params := &mcp.CallToolParams{Name: "index_build", Arguments: map[string]any{"repo_path": big, "incremental": false}}
	params.SetProgressToken("big")
	done := make(chan error, 1)
	go func() { _, err := cs.CallTool(ctx, params); done <- err }()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(progress)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no progress from the big build")
		}
	}
	index := filepath.Join(u.home, ".local", "share", "hearth", "index")
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled build completed")
	}
	waitNoWorkers(t, index, 5*time.Second)
	callTool(t, cs, "daemon_status", map[string]any{})

	u.change(t)
	sighup()
	select {
	case what := <-changed:
		if what != "resources" {
			t.Fatalf("heard %s changed", what)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no list-changed notification after SIGHUP")
	}
}

// TestModernGoSDKThroughShim: the Go SDK's default client through the shim,
// beside a legacy TypeScript SDK v1 client on the same daemon.
func TestModernGoSDKThroughShim(t *testing.T) {
	u := newEraUser(t)
	u.startDaemon(t)
	var legacy *tsRepl
	_, nodeErr := exec.LookPath("node")
	haveTS := nodeErr == nil && fileExists(filepath.Join("ts", "node_modules", "@modelcontextprotocol", "sdk"))
	if haveTS {
		legacy = startTSRepl(t, cleanEnv(u.home), u.home, bin.hearth)
	}
	var first map[string]any
	goModern(t, u, func(c *mcp.Client) *mcp.ClientSession {
		cs := shimSessionIn(t, u.env(), "/", c)
		first = structured(t, callTool(t, cs, "daemon_status", map[string]any{}))
		return cs
	}, func() {
		if legacy != nil {
			legacy.call("daemon_status", map[string]any{})
		}
		hangUpHearthds(t, u.home)
	})
	if legacy != nil {
		st := legacy.call("daemon_status", map[string]any{})
		if st["pid"] != first["pid"] || errorsOf(t, st) != errorsOf(t, first) {
			t.Fatalf("daemon_status before %v, after %v", first, st)
		}
	}
}

// TestModernGoSDKOverStdio: the Go SDK's default client starts hearthd stdio.
func TestModernGoSDKOverStdio(t *testing.T) {
	u := newEraUser(t)
	goModern(t, u, func(c *mcp.Client) *mcp.ClientSession {
		cmd := exec.Command(bin.hearthd, "stdio")
		cmd.Env = cleanEnv(u.home)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}, func() { hangUpHearthds(t, u.home) })
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// modernMeta is a modern request's _meta for raw frames.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw-modern","version":"1"}}`

// TestModernShimSurvivesDaemonKill: a modern session and a legacy one
// through shims when the daemon is killed: the modern one with an open
// subscription (in flight in the daemon), each with a request sent while
// the daemon was frozen. The subscription is no call that ran: the shim
// sends it to the new daemon again, which acknowledges it under its id
// (decision 0051), and it gets no error; the frozen daemon's requests are
// lost (-32004) when the shims relay, and answered by the new daemon when
// it had the clients' pipes (it never read them). The modern session goes
// on with nothing else replayed (the shim's probe is not seen by the
// client) and can listen again; the legacy one goes on with its initialize
// replayed.
func TestModernShimSurvivesDaemonKill(t *testing.T) {
	env, runtime, _ := shimEnv(t)
	m, l := startShim(t, env), startShim(t, env)
	m.send(`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{` + modernMeta + `}}`)
	if r := m.recv(); r["id"] != "d" || r["result"].(map[string]any)["resultType"] != "complete" {
		t.Fatalf("discover: %v", r)
	}
	m.send(`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + modernMeta + `}}`)
	if r := m.recv(); r["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen: %v", r)
	}
	l.initialize()
	pids := daemonsIn(runtime)
	if len(pids) != 1 {
		t.Fatalf("daemons: %v", pids)
	}
	syscall.Kill(pids[0], syscall.SIGSTOP)
	waitUntil(t, func() bool { return procState(pids[0]) == "T" })
	m.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"daemon_status","arguments":{},` + modernMeta + `}}`)
	l.send(`{"jsonrpc":"2.0","id":"l1","method":"tools/list"}`)
	time.Sleep(100 * time.Millisecond)
	syscall.Kill(pids[0], syscall.SIGKILL)

	relay := shimTransport() == "relay"
	got := map[any]map[string]any{}
	var reacked bool
	for !reacked || got[1.0] == nil {
		r := m.recv()
		if r["method"] == "notifications/subscriptions/acknowledged" {
			meta, _ := r["params"].(map[string]any)["_meta"].(map[string]any)
			if meta["io.modelcontextprotocol/subscriptionId"] != "sub" {
				t.Fatalf("acknowledged another listen: %v", r)
			}
			reacked = true
			continue
		}
		got[r["id"]] = r
	}
	if got["sub"] != nil {
		t.Fatalf("the open subscription was answered: %v", got["sub"])
	}
	if r := got[1.0]; relay && !isLost(r) || !relay && (r == nil || r["result"] == nil) {
		t.Fatalf("the call sent to the frozen daemon (%s): %v", shimTransport(), r)
	}
	if r := l.recv(); r["id"] != "l1" || relay && !isLost(r) || !relay && r["result"] == nil {
		t.Fatalf("the legacy request sent to the frozen daemon (%s): %v", shimTransport(), r)
	}

	m.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"daemon_status","arguments":{},` + modernMeta + `}}`)
	r := m.recv()
	if r["id"] != 2.0 || r["result"].(map[string]any)["resultType"] != "complete" {
		t.Fatalf("modern after the reconnect (the probe's reply must not reach the client): %v", r)
	}
	m.send(`{"jsonrpc":"2.0","id":"sub2","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + modernMeta + `}}`)
	if r := m.recv(); r["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen again: %v", r)
	}
	l.send(`{"jsonrpc":"2.0","id":"l2","method":"tools/list"}`)
	if r := l.recv(); r["id"] != "l2" || r["result"] == nil || r["result"].(map[string]any)["resultType"] != nil {
		t.Fatalf("legacy after the reconnect: %v", r)
	}
	if now := daemonsIn(runtime); len(now) != 1 || now[0] == pids[0] {
		t.Fatalf("want one new daemon, have %v (old %d)", now, pids[0])
	}
}
