//go:build unix

package test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// processesRunning lists live processes whose command line has arg, the
// shims (hearth run -- ...) and the upstreams' keepers (hearthd) aside.
func processesRunning(arg string) []int {
	return liveProcesses(func(dir string, _ []string) bool {
		if exe, _ := os.Readlink(filepath.Join(dir, "exe")); exe == bin.hearth || exe == bin.hearthd {
			return false
		}
		b, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		return err == nil && slices.Contains(strings.Split(string(b), "\x00"), arg)
	})
}

type catalogStatusView struct {
	Hosted []struct {
		Server, Key, State string
		Pid                int
		Catalog            *struct {
			Tools   int
			Answers bool
		}
	} `json:"hosted"`
}

// waitCatalogued waits until status shows a catalog entry for n servers.
func waitCatalogued(t *testing.T, env []string, n int) catalogStatusView {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st catalogStatusView
		raw := statusJSON(t, env)
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		have := 0
		for _, h := range st.Hosted {
			if h.Catalog != nil && h.Catalog.Tools > 0 {
				have++
			}
		}
		if have >= n {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d servers catalogued: %s", have, n, raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitScriptGone waits until no process runs script (hearthd stop ends them).
func waitScriptGone(t *testing.T, name, script string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(processesRunning(script)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s still runs after hearthd stop: %v", name, processesRunning(script))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func stopDaemon(t *testing.T, env []string) {
	t.Helper()
	cmd := exec.Command(bin.hearthd, "stop")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hearthd stop: %v %s", err, out)
	}
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// After one run of server-everything, server-memory, server-filesystem and
// the tests' own server, a restarted daemon answers a new client's
// initialize and tools/list for each from its catalog without starting any
// process, starts one on its first tool call, and when the started server
// lists other tools than the catalog held, the client hears
// tools/list_changed; a server whose code changed (its file's modification
// time) is not answered from the catalog; `hearthd servers forget` drops an
// entry.
func TestHostedCatalogAfterRestart(t *testing.T) {
	everything := npmServer(t, "server-everything")
	memory := npmServer(t, "server-memory")
	filesystem := npmServer(t, "server-filesystem")
	env, _, state := shimEnv(t)
	env = append(env, "MEMORY_FILE_PATH="+filepath.Join(state, "memory.jsonl"))
	// The tests' own server, copied so that its file's time can change.
	server := filepath.Join(state, "hostedserver")
	b, err := os.ReadFile(filepath.Join(bin.dir, "hostedserver"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(server, b, 0o700); err != nil {
		t.Fatal(err)
	}
	extra := filepath.Join(state, "extra-tools")
	os.WriteFile(extra, []byte("first\n"), 0o600)
	commands := map[string][]string{
		"everything": {"node", everything},
		"memory":     {"node", memory},
		"filesystem": {"node", filesystem, state},
		"own":        {server, "-extra-tools=" + extra},
	}
	scripts := map[string]string{"everything": everything, "memory": memory, "filesystem": filesystem, "own": server}
	first := map[string][]string{}
	for name, cmd := range commands {
		cs := runClient(t, env, nil, "", cmd...)
		first[name] = toolNames(t, cs)
		cs.Close()
	}
	waitCatalogued(t, env, 4)
	stopDaemon(t, env)
	for name, s := range scripts {
		waitScriptGone(t, name, s)
	}

	// A new daemon (the shim autostarts it): every client is answered from
	// the catalog, and nothing starts.
	changed := make(chan struct{}, 4)
	opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }}
	os.WriteFile(extra, []byte("first\nsecond\n"), 0o600) // the server will list one more tool
	sessions := map[string]*mcp.ClientSession{}
	for name, cmd := range commands {
		cs := runClient(t, env, opts, "", cmd...)
		sessions[name] = cs
		if got := toolNames(t, cs); !slices.Equal(got, first[name]) {
			t.Fatalf("%s listed %v from the catalog, first run %v", name, got, first[name])
		}
	}
	for name, s := range scripts {
		if pids := processesRunning(s); len(pids) > 0 {
			t.Fatalf("%s was started (pids %v) for initialize and tools/list", name, pids)
		}
	}
	// The first tool call starts that server, and only it.
	if out, isErr := callText(t, sessions["memory"], "read_graph", map[string]any{}); isErr {
		t.Fatalf("read_graph: %s", out)
	}
	if pids := processesRunning(memory); len(pids) != 1 {
		t.Fatalf("memory processes after its first call: %v", pids)
	}
	for _, name := range []string{"everything", "filesystem", "own"} {
		if pids := processesRunning(scripts[name]); len(pids) > 0 {
			t.Fatalf("%s started (pids %v) by another server's call", name, pids)
		}
	}
	// The tests' own server now lists another tool: its client is told.
	if out, _ := callText(t, sessions["own"], "echo", map[string]any{"text": "x"}); !strings.Contains(out, "pid=") {
		t.Fatalf("echo: %q", out)
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no tools/list_changed after the started server listed other tools")
	}
	if got := toolNames(t, sessions["own"]); !slices.Contains(got, "second") {
		t.Fatalf("tools after the change: %v", got)
	}
	for _, cs := range sessions {
		cs.Close()
	}
	waitCatalogued(t, env, 4)
	stopDaemon(t, env)
	for name, s := range scripts {
		waitScriptGone(t, name, s)
	}

	// The server's file changed: its entry is no longer trusted, and the
	// client's initialize waits for the started server.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(server, later, later); err != nil {
		t.Fatal(err)
	}
	cs := runClient(t, env, nil, "", commands["own"]...)
	if pids := processesRunning(server); len(pids) != 1 {
		t.Fatalf("a server whose file changed was answered from the catalog: processes %v", pids)
	}
	if got := toolNames(t, cs); !slices.Contains(got, "second") {
		t.Fatalf("tools: %v", got)
	}
	cs.Close()

	// forget (by key prefix) drops the entry of the memory server.
	st := waitCatalogued(t, env, 4)
	key := ""
	for _, h := range st.Hosted {
		if strings.Contains(h.Server, "server-memor") {
			key = h.Key
		}
	}
	cmd := exec.Command(bin.hearthd, "servers", "forget", key[:8])
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "forgot 1") {
		t.Fatalf("servers forget %s: %v %s", key[:8], err, out)
	}
	cmd = exec.Command(bin.hearthd, "status")
	cmd.Env = env
	out, _ = cmd.CombinedOutput()
	if !strings.Contains(string(out), "catalog: ") || strings.Contains(string(out), key+": catalog:") {
		t.Fatalf("status shows no catalog, or the forgotten entry:\n%s", out)
	}
	t.Logf("%s", out)
}
