//go:build unix

package test

import (
	"context"
	"encoding/json"
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// goSrc is Go's own source tree, the large repository the workspace tools
// are tested and measured on.
func goSrc(t *testing.T) string {
	t.Helper()
	src := filepath.Join(build.Default.GOROOT, "src")
	_, err := os.Stat(filepath.Join(src, "net/http/server.go"))
	needOrSkip(t, err == nil, "Go's source tree ($(go env GOROOT)/src)")
	return src
}

// gitRepo makes a committed repository with a few files.
func gitRepo(t *testing.T) string {
	t.Helper()
	_, err := exec.LookPath("git")
	needOrSkip(t, err == nil, "git")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	files := map[string]string{
		"main.go":      "package main\n\nfunc main() {\n\tprintln(Greeting())\n}\n",
		"greet.go":     "package main\n\n// Greeting is what main prints.\nfunc Greeting() string { return \"hello from hearth\" }\n",
		"docs/into.md": "# Intro\n\nhearth says hello.\n",
	}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	m, ok := res.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("no structured content: %+v", res)
	}
	return m
}

// toolError is an isError result's error object ({code, message, ...}),
// which the reply carries as content[0].text only: structuredContent is for
// results, which clients check against the tool's outputSchema.
func toolError(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if !res.IsError || len(res.Content) == 0 || res.StructuredContent != nil {
		t.Fatalf("not an error result (text only): %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	var m map[string]any
	if !ok || json.Unmarshal([]byte(tc.Text), &m) != nil {
		t.Fatalf("the error is not JSON text: %+v", res.Content[0])
	}
	return m
}

// textPayload is a raw tools/call result's content[0].text, decoded.
func textPayload(r map[string]any) map[string]any {
	var m map[string]any
	if c, ok := r["content"].([]any); ok && len(c) > 0 {
		if text, ok := c[0].(map[string]any)["text"].(string); ok {
			json.Unmarshal([]byte(text), &m)
		}
	}
	return m
}

// TestWorkspaceThroughShim: an editor started in a repository's
// subdirectory indexes, searches and reads it through the shim with the
// official Go SDK client; the repository comes from the shim's hello.
func TestWorkspaceThroughShim(t *testing.T) {
	repo := gitRepo(t)
	env, _, _ := shimEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	var progress []float64
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-workspace", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		},
	})
	cs := shimSessionIn(t, env, filepath.Join(repo, "docs"), client)

	res := callTool(t, cs, "search", map[string]any{"query": "hello"})
	if !res.IsError || toolError(t, res)["code"] != "NO_INDEX" {
		t.Fatalf("search before a build: %+v", res)
	}
	params := &mcp.CallToolParams{Name: "index_build", Arguments: map[string]any{}}
	params.SetProgressToken("build-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("index_build: %v %+v", err, res)
	}
	b := structured(t, res)
	if b["repo"] != repo || b["files"] != 3.0 || b["source"] != "git" {
		t.Fatalf("index_build: %v", b)
	}
	mu.Lock()
	// The protocol keeps at most 4 reports a second and drops one still
	// pending when the response goes out: the first (0 of 3) always arrives.
	if len(progress) == 0 || progress[0] != 0 || progress[len(progress)-1] > 3 {
		t.Fatalf("progress: %v", progress)
	}
	mu.Unlock()

	s := structured(t, callTool(t, cs, "search", map[string]any{"query": "Greeting()", "path_glob": "*.go", "context_lines": 1}))
	hits := s["hits"].([]any)
	if len(hits) != 2 {
		t.Fatalf("search: %v", s)
	}
	first := hits[0].(map[string]any)
	if first["path"] != "greet.go" || first["line"] != 4.0 || first["column"] != 6.0 {
		t.Fatalf("first hit: %v", first)
	}
	f := structured(t, callTool(t, cs, "show_file", map[string]any{"path": "greet.go", "start_line": 4, "end_line": 4}))
	if f["text"] != "4\tfunc Greeting() string { return \"hello from hearth\" }\n" {
		t.Fatalf("show_file: %v", f)
	}
	if res := callTool(t, cs, "show_file", map[string]any{"path": "../../etc/passwd"}); !res.IsError {
		t.Fatalf("show_file outside the repository: %+v", res)
	}
	w := structured(t, callTool(t, cs, "workspace_status", map[string]any{}))
	if w["repo"] != repo || w["git"].(map[string]any)["branch"] != "main" || w["index"].(map[string]any)["exists"] != true {
		t.Fatalf("workspace_status: %v", w)
	}
	c := structured(t, callTool(t, cs, "check_status", map[string]any{}))
	if c["git"].(map[string]any)["present"] != true || c["index"].(map[string]any)["indexes"] != 1.0 {
		t.Fatalf("check_status: %v", c)
	}
}

// TestIndexBuildProgressOfGoSource: a build of Go's source tree reports
// progress at most 4 times a second, strictly increasing.
func TestIndexBuildProgressOfGoSource(t *testing.T) {
	src := goSrc(t)
	d := startDaemon(t)
	c := dialRaw(t, d.socket)
	c.initialize()
	start := time.Now()
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"index_build","arguments":{"repo_path":%q},"_meta":{"progressToken":"p"}}}`, src))
	var last float64 = -1
	n := 0
	for {
		var m map[string]any
		json.Unmarshal([]byte(c.recvWithin(5*time.Minute)), &m)
		if m["method"] == "notifications/progress" {
			p := m["params"].(map[string]any)
			if p["progressToken"] != "p" || p["progress"].(float64) <= last {
				t.Fatalf("progress %v after %v", p, last)
			}
			last = p["progress"].(float64)
			n++
			continue
		}
		if m["id"] != 1.0 {
			t.Fatalf("unexpected frame %v", m)
		}
		r := m["result"].(map[string]any)
		if r["isError"] == true {
			t.Fatalf("index_build: %v", r)
		}
		st := r["structuredContent"].(map[string]any)
		elapsed := time.Since(start).Seconds()
		if float64(n) > 4*elapsed+1 {
			t.Fatalf("%d progress notifications in %.1f s: more than 4 a second", n, elapsed)
		}
		if n < 2 || last > st["listed"].(float64) {
			t.Fatalf("%d notifications, last %v, listed %v", n, last, st["listed"])
		}
		t.Logf("indexed %v files, %v bytes in %.1f s with %d progress notifications", st["files"], st["bytes"], elapsed, n)
		return
	}
}

// recvWithin is recv with a longer deadline.
func (r *rawConn) recvWithin(d time.Duration) string {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(d))
	if !r.sc.Scan() {
		r.t.Fatalf("connection ended: %v", r.sc.Err())
	}
	return r.sc.Text()
}

// children lists the live descendants of pid (from /proc).
func descendants(pid int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(fields) > 1 && fields[0] != "Z" {
			parent[p], _ = strconv.Atoi(fields[1])
		}
	}
	var out []int
	var walk func(int)
	walk = func(pp int) {
		for c, p := range parent {
			if p == pp {
				out = append(out, c)
				walk(c)
			}
		}
	}
	walk(pid)
	return out
}

// startBuild sends an index_build of src and waits for its first progress
// notification, so the worker is running.
func startBuild(t *testing.T, c *rawConn, id int, src string, extra string) {
	t.Helper()
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"index_build","arguments":{"repo_path":%q,"incremental":false%s},"_meta":{"progressToken":"t%d"}}}`, id, src, extra, id))
	for {
		line := c.recvWithin(time.Minute)
		if strings.Contains(line, `"notifications/progress"`) && strings.Contains(line, fmt.Sprintf(`"t%d"`, id)) {
			var m struct {
				Params struct{ Progress float64 } `json:"params"`
			}
			json.Unmarshal([]byte(line), &m)
			if m.Params.Progress > 0 {
				return
			}
			continue
		}
		t.Fatalf("before the build ran: %s", line)
	}
}

// TestIndexBuildCancelAndTimeout: $/cancelRequest gives exactly one
// CANCELLED response and no progress after it; notifications/cancelled gives
// no response; a timeout gives TOOL_TIMEOUT with timeoutMs. Each time the worker's whole process tree is gone.
func TestIndexBuildCancelAndTimeout(t *testing.T) {
	src := goSrc(t)
	d := startDaemon(t)
	c := dialRaw(t, d.socket)
	c.initialize()
	pid := d.cmd.Process.Pid
	noChildren := func(when string) {
		t.Helper()
		if kids := descendants(pid); len(kids) != 0 {
			t.Fatalf("%s: the daemon still has children %v", when, kids)
		}
	}

	startBuild(t, c, 1, src, "")
	if len(descendants(pid)) == 0 {
		t.Fatal("no worker process while the build runs")
	}
	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`)
	for {
		var m map[string]any
		json.Unmarshal([]byte(c.recv()), &m)
		if m["method"] == "notifications/progress" {
			continue // sent before the cancel was handled
		}
		if m["id"] != 1.0 {
			t.Fatalf("want the response to 1, got %v", m)
		}
		r, _ := m["result"].(map[string]any)
		if r["isError"] != true || textPayload(r)["code"] != "CANCELLED" {
			t.Fatalf("cancel reply: %v", m)
		}
		noChildren("after $/cancelRequest")
		// Nothing more for id 1: the next frame is the ping's answer.
		c.send(`{"jsonrpc":"2.0","id":"ping-1","method":"ping"}`)
		time.Sleep(300 * time.Millisecond) // a late progress would be coalesced into this window
		var p map[string]any
		json.Unmarshal([]byte(c.recv()), &p)
		if p["id"] != "ping-1" {
			t.Fatalf("after the CANCELLED response: %v", p)
		}
		break
	}

	startBuild(t, c, 2, src, "")
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user"}}`)
	c.send(`{"jsonrpc":"2.0","id":"ping-2","method":"ping"}`)
	for {
		var m map[string]any
		json.Unmarshal([]byte(c.recv()), &m)
		if m["method"] == "notifications/progress" {
			continue
		}
		if m["id"] != "ping-2" {
			t.Fatalf("notifications/cancelled must get no response: %v", m)
		}
		break
	}
	// The ping may overtake the kill: wait for the tree to go, within the grace.
	deadline := time.Now().Add(5 * time.Second)
	for len(descendants(pid)) != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	noChildren("after notifications/cancelled")

	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"index_build","arguments":{"repo_path":%q,"incremental":false,"timeout_ms":300}}}`, src))
	var m map[string]any
	for {
		// A progress of build 2 may still be on its way: notifications/cancelled
		// gets no response to order it before.
		m = nil
		json.Unmarshal([]byte(c.recvWithin(time.Minute)), &m)
		if m["method"] != "notifications/progress" {
			break
		}
	}
	r, _ := m["result"].(map[string]any)
	e := textPayload(r)
	if m["id"] != 3.0 || r["isError"] != true || e["code"] != "TOOL_TIMEOUT" || e["timeoutMs"] != 300.0 {
		t.Fatalf("timeout reply: %v", m)
	}
	noChildren("after the timeout")
	tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(d.socket), "..", "home", "index", "*.tmp-*"))
	if len(tmps) != 0 {
		t.Fatalf("temporary index files left: %v", tmps)
	}
}

// TestStartCancelRounds: 1 000 rounds of starting a
// build and cancelling it leave no process behind. The cancel lands at
// different moments: while git lists the files, while the worker starts,
// while it indexes. It runs when HEARTH_STRESS=1 (.ci/run sets it) or in CI.
func TestStartCancelRounds(t *testing.T) {
	if os.Getenv("HEARTH_STRESS") != "1" && !inCI() {
		t.Skip("set HEARTH_STRESS=1 to run the 1000-round start-then-cancel test")
	}
	repo := gitRepo(t)
	// Enough files that indexing takes tens of milliseconds.
	for i := 0; i < 3000; i++ {
		p := filepath.Join(repo, "gen", strconv.Itoa(i%30), strconv.Itoa(i)+".txt")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("line %d of a generated file\n", i), 40)), 0o644)
	}
	d := startDaemon(t)
	c := dialRaw(t, d.socket)
	c.initialize()
	pid := d.cmd.Process.Pid
	// One whole build first: the cancels are spread over its duration.
	start := time.Now()
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"index_build","arguments":{"repo_path":%q}}}`, repo))
	if line := c.recvWithin(time.Minute); !strings.Contains(line, `"files":3003`) {
		t.Fatalf("first build: %s", line)
	}
	whole := time.Since(start)
	t.Logf("a whole build takes %v", whole)
	const rounds = 1000
	indexing := 0 // rounds cancelled while the worker reported progress
	for i := 1; i <= rounds; i++ {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"index_build","arguments":{"repo_path":%q,"incremental":false},"_meta":{"progressToken":%d}}}`, i, repo, i))
		time.Sleep(whole * time.Duration(i%20) / 40)
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":%d}}`, i))
		sawProgress := false
		for {
			var m map[string]any
			if err := json.Unmarshal([]byte(c.recvWithin(time.Minute)), &m); err != nil {
				t.Fatalf("round %d: %v", i, err)
			}
			if m["method"] == "notifications/progress" {
				sawProgress = true
				continue
			}
			if m["id"] != float64(i) {
				t.Fatalf("round %d: %v", i, m)
			}
			r := m["result"].(map[string]any)
			// A build that finished before the cancel arrived is a success.
			if code := textPayload(r)["code"]; r["isError"] == true && code != "CANCELLED" {
				t.Fatalf("round %d: %v", i, m)
			}
			break
		}
		if sawProgress {
			indexing++
		}
		if kids := descendants(pid); len(kids) != 0 {
			t.Fatalf("round %d: after the response the daemon still has children %v", i, kids)
		}
	}
	t.Logf("%d of %d rounds were cancelled while the worker was indexing", indexing, rounds)
	if indexing < rounds/10 {
		t.Fatalf("only %d rounds reached the worker: the test is not exercising the tree kill", indexing)
	}
	// Nothing escaped the daemon either: no process names this home.
	if strays := processesMentioning(filepath.Join(filepath.Dir(d.socket), "..", "home")); len(strays) != 0 {
		t.Fatalf("stray processes: %v", strays)
	}
}

// processesMentioning lists processes whose command line contains s.
func processesMentioning(s string) []string {
	s = filepath.Clean(s)
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// TestRootsChooseTheRepository: an editor that starts the shim in / but
// declares its workspace folder as an MCP root gets that repository.
func TestRootsChooseTheRepository(t *testing.T) {
	repo := gitRepo(t)
	env, _, _ := shimEnv(t)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-roots", Version: "1"}, nil)
	//lint:ignore SA1019 hearth serves the roots feature the 2026-07-28 era deprecates: this checks that a client's roots still choose the repository
	client.AddRoots(&mcp.Root{URI: "file://" + filepath.Join(repo, "docs"), Name: "docs"})
	cs := shimSessionIn(t, env, "/", client)
	w := structured(t, callTool(t, cs, "workspace_status", map[string]any{}))
	if w["repo"] != repo {
		t.Fatalf("workspace_status: %v", w)
	}
}
