package test

//lint:file-ignore SA1019 hosted servers of the 2025 era ask for roots, sampling and logging, which 2026-07-28 deprecates; hearth must route them

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

// npmServer is the entry script of a server installed in test/ts.
func npmServer(t *testing.T, pkg string) string {
	t.Helper()
	needNode(t)
	p, _ := filepath.Abs(filepath.Join("ts", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js"))
	_, err := os.Stat(p)
	needOrSkip(t, err == nil, "test/ts/node_modules/@modelcontextprotocol/"+pkg+" (npm ci in test/ts)")
	return p
}

// Three TypeScript SDK v1 clients, each with the SDK's default environment,
// on one server-everything behind `hearth run`: one upstream process; the
// same ids from every client answered to their own; progress to its own
// client; a cancel cancels only its own call; sampling during the only
// client's call reaches it, and with two clients in flight is refused and
// seen by none.
func TestHostedServerEverythingThreeTypeScriptClients(t *testing.T) {
	server := npmServer(t, "server-everything")
	// The SDK's default environment has HOME but no XDG_RUNTIME_DIR: the
	// shims find the user's daemon through the data directory under HOME.
	env, _ := startUserDaemon(t)
	var out struct {
		Upstreams, UpstreamsAtEnd     int
		Server                        struct{ Name string }
		Echoes                        []string
		Progress                      struct{ A, B []float64 }
		Cancel                        struct{ A, B string }
		HasSampling                   bool
		SamplingAlone, SamplingShared struct {
			Text           string
			IsError        bool
			AskedA, AskedB int
		}
		Ping string
	}
	raw := runNodeScript(t, env, "hosted.mjs", bin.hearth, server)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	t.Logf("%s", raw)
	if out.Upstreams != 1 || out.UpstreamsAtEnd != 1 || out.Server.Name != "mcp-servers/everything" {
		t.Fatalf("upstreams %d/%d, server %q", out.Upstreams, out.UpstreamsAtEnd, out.Server.Name)
	}
	if strings.Join(out.Echoes, "|") != "Echo: from a|Echo: from b|Echo: from c" {
		t.Fatalf("echoes %q", out.Echoes)
	}
	if len(out.Progress.A) == 0 || len(out.Progress.B) == 0 || len(out.Progress.A) > 2 || len(out.Progress.B) > 2 {
		t.Fatalf("progress %+v", out.Progress)
	}
	if !strings.Contains(out.Cancel.A, "rejected") || !strings.Contains(out.Cancel.B, "completed") {
		t.Fatalf("cancel %+v", out.Cancel)
	}
	if !out.HasSampling {
		t.Fatal("the sampling tool is missing: the first client's sampling capability did not reach the upstream")
	}
	if out.SamplingAlone.IsError || !strings.Contains(out.SamplingAlone.Text, "answer of a") || out.SamplingAlone.AskedA != 1 || out.SamplingAlone.AskedB != 0 {
		t.Fatalf("sampling alone %+v", out.SamplingAlone)
	}
	if !out.SamplingShared.IsError || !strings.Contains(out.SamplingShared.Text, "shared") || out.SamplingShared.AskedA != 1 || out.SamplingShared.AskedB != 0 {
		t.Fatalf("sampling with two in flight %+v", out.SamplingShared)
	}
	if out.Ping != "ok" {
		t.Fatalf("ping %q", out.Ping)
	}
}

// The Go SDK client that probes with server/discover falls back and is
// served by the instance a 2025-11-25 client opened; the Inspector CLI
// (its own instance: it gives the shim another environment) lists
// server-everything's tools.
func TestHostedServerEverythingDiscoverAndInspector(t *testing.T) {
	server := npmServer(t, "server-everything")
	env, _ := startUserDaemon(t) // the Inspector passes its server a minimal environment
	node, _ := exec.LookPath("node")
	connect := func(version string) *mcp.ClientSession { return runClient(t, env, nil, version, node, server) }
	legacy := connect("2025-11-25")
	modern := connect("") // the SDK's latest: probes with server/discover first
	for _, cs := range []*mcp.ClientSession{legacy, modern} {
		if out, isErr := callText(t, cs, "echo", map[string]any{"message": "hi"}); isErr || out != "Echo: hi" {
			t.Fatalf("echo: %q", out)
		}
	}
	home := envValue(env, "HOME")
	if n := len(upstreamsRunning(server, home)); n != 1 {
		t.Fatalf("%d upstreams", n)
	}
	_, _ = needInspector(t)
	r := runInspector(t, env, []string{bin.hearth, "run", "--", node, server}, "--method", "tools/list")
	if r.code != 0 {
		t.Fatalf("inspector tools/list exited %d\n%s", r.code, r.stderr)
	}
	var list struct {
		Result struct{ Tools []struct{ Name string } }
	}
	json.Unmarshal(r.raw, &list)
	names := ""
	for _, tl := range list.Result.Tools {
		names += tl.Name + " "
	}
	if !strings.Contains(names, "echo ") || !strings.Contains(names, "trigger-long-running-operation") {
		t.Fatalf("inspector saw tools %q in %s", names, r.raw)
	}
}

// upstreamsRunning lists the live processes running script that a daemon
// whose HOME is home started.
func upstreamsRunning(script, home string) []int {
	return liveProcesses(func(dir string, stat []string) bool {
		b, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || !strings.Contains(string(b), script) || strings.HasSuffix(strings.Split(string(b), "\x00")[0], "hearth") ||
			strings.Contains(string(b), "hearth-keeper") {
			return false // not the server: a shim whose arguments name it, or the keeper leading its group
		}
		penv, _ := os.ReadFile(filepath.Join("/proc", stat[1], "environ"))
		return slices.Contains(strings.Split(string(penv), "\x00"), "HOME="+home)
	})
}

func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// server-filesystem on a directory instance asks for roots: hearth answers
// with the instance's directory, which becomes the directory the server
// allows, not the one in its arguments nor a union of clients' roots.
func TestHostedServerFilesystemRoots(t *testing.T) {
	server := npmServer(t, "server-filesystem")
	env, _, _ := shimEnv(t)
	node, _ := exec.LookPath("node")
	work, other := t.TempDir(), t.TempDir()
	work, _ = filepath.EvalSymlinks(work)
	os.WriteFile(filepath.Join(work, "note.txt"), []byte("in the work dir"), 0o600)
	cmd := exec.Command(bin.hearth, "run", "--", node, server, other)
	cmd.Env, cmd.Dir = env, work
	cl := mcp.NewClient(&mcp.Implementation{Name: "go", Version: "1"}, nil)
	cl.AddRoots(&mcp.Root{URI: "file:///somewhere/else", Name: "client root"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	deadline := time.Now().Add(10 * time.Second)
	var allowed string
	for time.Now().Before(deadline) {
		allowed, _ = callText(t, cs, "list_allowed_directories", map[string]any{})
		if strings.Contains(allowed, work) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(allowed, work) || strings.Contains(allowed, "somewhere") || strings.Contains(allowed, other) {
		t.Fatalf("allowed directories %q: want only %s", allowed, work)
	}
	if out, isErr := callText(t, cs, "read_text_file", map[string]any{"path": filepath.Join(work, "note.txt")}); isErr || !strings.Contains(out, "in the work dir") {
		t.Fatalf("read: %q", out)
	}
}

// server-memory owns its file: two clients of one global instance write to
// it through one process, and the variable the entry set names the file.
func TestHostedServerMemorySharesItsFile(t *testing.T) {
	server := npmServer(t, "server-memory")
	env, _, _ := shimEnv(t)
	node, _ := exec.LookPath("node")
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	env = append(env, "MEMORY_FILE_PATH="+file)
	var sessions []*mcp.ClientSession
	for i := range 2 {
		cmd := exec.Command(bin.hearth, "run", "--share", "global", "--", node, server)
		cmd.Env = env
		cl := mcp.NewClient(&mcp.Implementation{Name: "go", Version: "1"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		sessions = append(sessions, cs)
		if _, isErr := callText(t, cs, "create_entities", map[string]any{"entities": []map[string]any{
			{"name": "entity" + string(rune('A'+i)), "entityType": "test", "observations": []string{"written by client " + string(rune('A'+i))}}}}); isErr {
			t.Fatalf("create_entities %d failed", i)
		}
	}
	graph, _ := callText(t, sessions[0], "read_graph", map[string]any{})
	if !strings.Contains(graph, "entityA") || !strings.Contains(graph, "entityB") {
		t.Fatalf("graph %q", graph)
	}
	b, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(b), "entityA") || !strings.Contains(string(b), "entityB") {
		t.Fatalf("the server's file %s: %v %q", file, err, b)
	}
	if n := len(upstreamsRunning(server, envValue(env, "HOME"))); n != 1 {
		t.Fatalf("%d upstreams", n)
	}
}
