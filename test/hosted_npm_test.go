//go:build unix

package test

//lint:file-ignore SA1019 hosted servers of the 2025 era ask for roots, sampling and logging, which 2026-07-28 deprecates; hearth must route them

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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

// The Go SDK client that probes with server/discover (2026-07-28 through
// the era bridge, decision 0072) is
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
		cs := runClientWith(t, env, nil, "2025-11-25", []string{"--share", "global", "--", node, server})
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

// Three TypeScript SDK v1 clients on one directory instance of
// server-everything, and a fourth on a client instance (see
// test/ts/hosted_features.mjs for how each point is made certain without
// timing): logging by level and to the only client in flight; resources
// listed and read, subscriptions counted per client with updates to
// subscribers only, released when a client leaves; elicitation to the only client in flight, refused with
// two; roots answered with the instance's directory, or the client's own
// on a client instance; a list change told to every client, with the next
// list fresh.
func TestHostedServerEverythingFeatures(t *testing.T) {
	server := npmServer(t, "server-everything")
	env, _ := startUserDaemon(t)
	work, _ := filepath.EvalSymlinks(t.TempDir())
	type abc struct{ A, B, C int }
	type answer struct {
		Text           string
		IsError        bool
		AskedA, AskedB int
	}
	var out struct {
		RootsLogged    bool
		RootsDirectory struct {
			Text           string
			AskedA, AskedB int
		}
		RootsClient struct {
			Text   string
			AskedD int
		}
		LogAlone, LogSecondSubscribe, LogShared abc
		HoldStarted                             bool
		ElicitShared, ElicitAlone               answer
		Updates                                 struct {
			Both, AfterA, AfterB abc
			Other                [][]string
		}
		UnsubscribeLogs  struct{ R1, R2, R3 abc }
		LeftUnsubscribed bool
		Resources        struct {
			Count        int
			URI, ReadURI string
			ReadBytes    int
		}
		ListChange struct {
			Call          answer
			Before, After bool
			Told          []int
		}
		Simulated struct{ A, B, C []string }
	}
	raw := runNodeScript(t, env, "hosted_features.mjs", bin.hearth, server, work)
	t.Logf("%s", raw)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}

	// Roots: the upstream's roots/list on a directory instance is answered
	// by the client it serves, with its own roots (the upstream logged it
	// got one root): a, the only client then, once; never a directory
	// hearth made up. A client instance forwards its client's roots too.
	if !out.RootsLogged || !strings.Contains(out.RootsDirectory.Text, "1. root of a\n   URI: file:///roots/of/a") || strings.Contains(out.RootsDirectory.Text, work) ||
		out.RootsDirectory.AskedA != 1 || out.RootsDirectory.AskedB != 0 {
		t.Errorf("roots on a directory instance: logged %v, %+v; want a's own, asked of a once", out.RootsLogged, out.RootsDirectory)
	}
	if !strings.Contains(out.RootsClient.Text, "1. root of d\n   URI: file:///roots/of/d") || out.RootsClient.AskedD == 0 {
		t.Errorf("roots on a client instance: %+v", out.RootsClient)
	}

	// Logging: a log message of the only client in flight reaches it alone;
	// with two in flight every client gets it by its own level (a debug,
	// b info, c notice: an info message reaches a and b, not c).
	if out.LogAlone != (abc{1, 0, 0}) || out.LogSecondSubscribe != (abc{1, 0, 0}) {
		t.Errorf("subscribe logs: alone %+v, after b's subscribe %+v; want a's only, and b's subscribe never upstream", out.LogAlone, out.LogSecondSubscribe)
	}
	if !out.HoldStarted || out.LogShared != (abc{1, 1, 0}) {
		t.Errorf("a log with two clients in flight: %+v (hold started %v); want a and b, not c (notice)", out.LogShared, out.HoldStarted)
	}
	// Messages no request caused go to every client by its level: c's are
	// a's at notice or above; b's hold a's at info or above, in order, with
	// at most the one b's toggle caused before them and one at its end.
	atLeast := func(levels []string, min string) []string {
		order := []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
		var kept []string
		for _, l := range levels {
			if slices.Index(order, l) >= slices.Index(order, min) {
				kept = append(kept, l)
			}
		}
		return kept
	}
	sim := out.Simulated
	wantB, bHolds := atLeast(sim.A, "info"), false
	for before := 0; before <= 1 && before+len(wantB) <= len(sim.B); before++ {
		bHolds = bHolds || (slices.Equal(sim.B[before:before+len(wantB)], wantB) && len(sim.B)-before-len(wantB) <= 1)
	}
	if len(sim.A) == 0 || !slices.Equal(sim.C, atLeast(sim.A, "notice")) || !slices.Equal(atLeast(sim.B, "info"), sim.B) || !bHolds {
		t.Errorf("simulated logging by level: a (debug) %v, b (info) %v, c (notice) %v", sim.A, sim.B, sim.C)
	}

	// Elicitation: to a alone when its call is the only one in flight; its
	// answer reached the upstream. With c's call in flight too, refused and
	// seen by no client.
	if out.ElicitShared.AskedA != 0 || out.ElicitShared.AskedB != 0 || !out.ElicitShared.IsError || !strings.Contains(out.ElicitShared.Text, "shared") {
		t.Errorf("elicitation with two clients in flight: %+v", out.ElicitShared)
	}
	if out.ElicitAlone.IsError || !strings.Contains(out.ElicitAlone.Text, "Name: from a") || out.ElicitAlone.AskedA != 1 || out.ElicitAlone.AskedB != 0 {
		t.Errorf("elicitation with a alone in flight: %+v", out.ElicitAlone)
	}

	// Subscriptions counted per client: updates reach subscribers only; a's
	// unsubscribe while b holds the URI is answered by hearth (no upstream
	// log); b's, the last, reaches the upstream, which then sends none.
	u := out.Updates
	if u.Both != (abc{1, 1, 0}) || u.AfterA != (abc{1, 2, 0}) || u.AfterB != (abc{1, 2, 0}) {
		t.Errorf("resource updates (cumulative): both subscribed %+v, after a's unsubscribe %+v, after b's %+v", u.Both, u.AfterA, u.AfterB)
	}
	for i, o := range u.Other {
		if len(o) != 0 {
			t.Errorf("client %c got updates of %v", 'a'+i, o)
		}
	}
	if out.UnsubscribeLogs.R1 != (abc{0, 1, 0}) || out.UnsubscribeLogs.R2 != (abc{0, 1, 0}) {
		t.Errorf("unsubscribe logs %+v: want b's last unsubscribes only", out.UnsubscribeLogs)
	}
	// A client that leaves has its subscription released upstream; the
	// upstream's log of it, caused by no client, goes to all by level.
	if !out.LeftUnsubscribed || out.UnsubscribeLogs.R3 != (abc{1, 1, 0}) {
		t.Errorf("the subscription of a client that left: released %v, logs %+v", out.LeftUnsubscribed, out.UnsubscribeLogs.R3)
	}

	// Resources and list changes.
	r := out.Resources
	if r.Count == 0 || r.URI == "" || r.ReadURI != r.URI || r.ReadBytes == 0 {
		t.Errorf("resources: %+v", r)
	}
	lc := out.ListChange
	if lc.Call.IsError || lc.Before || !lc.After || len(lc.Told) != 3 || slices.Contains(lc.Told, 0) {
		t.Errorf("a resource list change: %+v; want every client told and b's next list fresh", lc)
	}
}
