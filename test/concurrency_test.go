//go:build unix

package test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPingAnsweredDuringBuild: on one MCP connection, ping, tools/list and
// daemon_status are answered while an index_build of Go's source tree runs
// on the same connection, before the build's own reply.
func TestPingAnsweredDuringBuild(t *testing.T) {
	src := goSrc(t)
	d := startDaemon(t)
	c := dialRaw(t, d.socket)
	c.initialize()
	startBuild(t, c, 1, src, "")
	c.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	c.send(`{"jsonrpc":"2.0","id":"l","method":"tools/list"}`)
	c.send(`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"daemon_status","arguments":{}}}`)
	want := map[string]bool{`"id":"p"`: true, `"id":"l"`: true, `"id":"s"`: true}
	for len(want) > 0 {
		line := c.recvWithin(time.Minute)
		if strings.Contains(line, `"notifications/progress"`) {
			continue
		}
		if strings.Contains(line, `"id":1,`) {
			t.Fatalf("the build answered before %v: they waited behind it", want)
		}
		found := false
		for id := range want {
			if strings.Contains(line, id) {
				delete(want, id)
				found = true
			}
		}
		if !found {
			t.Fatalf("unexpected frame: %.300s", line)
		}
	}
	for {
		line := c.recvWithin(2 * time.Minute)
		if strings.Contains(line, `"id":1,`) {
			if strings.Contains(line, `"isError":true`) {
				t.Fatalf("index_build: %.500s", line)
			}
			return
		}
	}
}

// TestKeepAliveSurvivesLongBuilds: the Go SDK client with a 2 s keep-alive
// (each ping must be answered within 1 s, or the SDK closes the session)
// stays connected through 8 s (four keep-alive pings) of back-to-back full
// builds of Go's source tree, each longer than that second: pings are never
// queued behind a call.
func TestKeepAliveSurvivesLongBuilds(t *testing.T) {
	src := goSrc(t)
	env, _, _ := shimEnv(t)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-keepalive", Version: "1"}, &mcp.ClientOptions{KeepAlive: 2 * time.Second})
	cs := shimSessionIn(t, env, "", client)
	deadline := time.Now().Add(8 * time.Second)
	builds := 0
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "index_build", Arguments: map[string]any{"repo_path": src, "incremental": false}})
		cancel()
		if err != nil {
			t.Fatalf("build %d: the session did not survive: %v", builds+1, err)
		}
		if res.IsError {
			t.Fatalf("build %d: %+v", builds+1, res.StructuredContent)
		}
		builds++
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("after %d builds: %v", builds, err)
	}
	t.Logf("%d full builds in 8 s with a 2 s keep-alive", builds)
}

// TestPlainRequestsKeepTheirOrder: a connection that never sends initialize
// (a plain JSON-RPC client of the schema methods) gets its replies in
// request order, a slow request's before a fast one's.
func TestPlainRequestsKeepTheirOrder(t *testing.T) {
	d := startDaemon(t)
	c := dialRaw(t, d.socket)
	many := make([]string, 100)
	for i := range many {
		many[i] = fmt.Sprintf(`{"name":"s%d","fragment_shader":"void main(){}","vertex_shader":"void main(){}","uniforms":[]}`, i)
	}
	for round := 0; round < 20; round++ {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"slow%d","method":"validate_many","params":{"schema":"shader","assets":[%s]}}`, round, strings.Join(many, ",")))
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"fast%d","method":"validate_asset","params":{"schema":"shader","asset":{}}}`, round))
	}
	for round := 0; round < 20; round++ {
		for _, id := range []string{"slow", "fast"} {
			line := c.recv()
			if !strings.Contains(line, fmt.Sprintf(`"id":"%s%d"`, id, round)) {
				t.Fatalf("round %d: want %s first, got %.300s", round, id, line)
			}
		}
	}
}

// TestClientCloseMidBuildLeavesNothing: the TypeScript SDK client (its
// default environment) closes 300 ms into a large index_build, as an editor
// window closing does. Five seconds later no index worker of that daemon is
// alive and no temporary index file is left.
func TestClientCloseMidBuildLeavesNothing(t *testing.T) {
	src := bigTree(t)
	user := shortTempDir(t)
	runtime := shortTempDir(t)
	t.Cleanup(func() { killDaemonsIn(runtime) })
	// Start the daemon through a shim that has XDG_RUNTIME_DIR, so the
	// cleanup finds it; the TypeScript client then attaches through its
	// data directory.
	full := append(cleanEnv(user), "XDG_RUNTIME_DIR="+runtime)
	first := shimSession(t, full)
	callTool(t, first, "daemon_status", map[string]any{})
	index := filepath.Join(user, ".local", "share", "hearth", "index")

	ts := startTSRepl(t, cleanEnv(user), user, bin.hearth)
	ts.send(map[string]any{"start": "index_build", "args": map[string]any{"repo_path": src, "incremental": false}})
	if m := ts.next(); m["started"] != true {
		t.Fatalf("build did not start: %v", m)
	}
	// The worker starts after the call's answer to "start": wait for it.
	for deadline := time.Now().Add(10 * time.Second); len(processesMentioning(index)) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no index worker running: the build ended too soon to test anything")
		}
	}
	closed := time.Now()
	ts.send(map[string]any{"close": true})
	if m := ts.next(); m["closed"] != true {
		t.Fatalf("close: %v", m)
	}
	// Within 5 s of the close the workers and their temporary files are
	// gone: wait for that, not the whole 5 s.
	for time.Since(closed) < 5*time.Second {
		tmps, _ := filepath.Glob(filepath.Join(index, "*.tmp-*"))
		if len(processesMentioning(index)) == 0 && len(tmps) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if workers := processesMentioning(index); len(workers) != 0 {
		t.Fatalf("5 s after the client closed, index workers are alive: %v", workers)
	}
	tmps, _ := filepath.Glob(filepath.Join(index, "*.tmp-*"))
	if len(tmps) != 0 {
		t.Fatalf("temporary index files left: %v", tmps)
	}

	// The daemon serves on.
	if res := callTool(t, first, "daemon_status", map[string]any{}); res.IsError {
		t.Fatalf("daemon_status after: %+v", res)
	}
}

// bigTree is the Go module cache: hundreds of MB of source, the largest tree
// every machine that runs these tests has (they need its modules).
func bigTree(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	return dir
}

// TestShimGoneMidBuildStopsTheBuild: a client that closes stdin and stops
// reading, or a shim stopped with SIGTERM (what a client does when a server
// does not exit), makes the shim close its connection at once, and the
// daemon stops the build: its worker is gone within a second and it never
// writes the index.
func TestShimGoneMidBuildStopsTheBuild(t *testing.T) {
	src := bigTree(t)
	for _, how := range []string{"stdin closed, stdout unread", "SIGTERM", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			env, _, state := shimEnv(t)
			index := filepath.Join(state, "home", "index")
			p := startShim(t, env)
			p.initialize()
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"index_build","arguments":{"repo_path":%q,"incremental":false},"_meta":{"progressToken":"t"}}}`, src))
			for {
				m := p.recv()
				if m["method"] != "notifications/progress" {
					t.Fatalf("before the build ran: %v", m)
				}
				if m["params"].(map[string]any)["progress"].(float64) > 0 {
					break
				}
			}
			if len(processesMentioning(index)) == 0 {
				t.Fatal("no index worker running")
			}
			switch how {
			case "SIGTERM":
				p.cmd.Process.Signal(syscall.SIGTERM)
			case "SIGKILL": // what a client does when its server does not stop
				p.cmd.Process.Kill()
			default:
				p.stdin.Close()
				p.stdout.Close()
			}
			select {
			case <-p.done:
			case <-time.After(5 * time.Second):
				t.Fatalf("the shim did not exit; stderr:\n%s", p.stderr.String())
			}
			deadline := time.Now().Add(time.Second)
			for len(processesMentioning(index)) > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if workers := processesMentioning(index); len(workers) > 0 {
				t.Fatalf("index workers still alive a second after the shim went: %v", workers)
			}
			if idx, _ := filepath.Glob(filepath.Join(index, "*.idx*")); len(idx) != 0 {
				t.Fatalf("the build ran on for nobody and left %v", idx)
			}
		})
	}
}
