//go:build unix

//lint:file-ignore SA1019 hearth's shared capability set declares roots and sampling, which 2026-07-28 deprecates: the catalog answers a modern upstream's lists only to a client that declares the same

package test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sharedCapsOptions are go-sdk client options declaring roots, sampling
// and elicitation, the same for every client of a test: a modern
// upstream's lists are fetched with its first client's capabilities, and
// its catalogued lists are answered only to a client declaring those
// (decisions 0051 and 0056). changed, when set, hears
// tools/list_changed.
func sharedCapsOptions(changed chan<- string, name string) *mcp.ClientOptions {
	opts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{
		RootsV2: &mcp.RootCapabilities{}, Sampling: &mcp.SamplingCapabilities{}, Elicitation: &mcp.ElicitationCapabilities{}}}
	if changed != nil {
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- name:
			default:
			}
		}
	}
	return opts
}

// copyServer copies the tests' own hosted server into dir, so that its
// processes are this test's alone (processesOf goes by the executable).
func copyServer(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(bin.dir, "hostedserver"))
	if err != nil {
		t.Fatal(err)
	}
	server := filepath.Join(dir, "hostedserver")
	if err := os.WriteFile(server, b, 0o700); err != nil {
		t.Fatal(err)
	}
	return server
}

// After one run of a server that speaks only 2026-07-28, a restarted
// daemon answers a legacy client's initialize and tools/list and a modern
// client's server/discover and tools/list from its catalog without
// starting the server; the first tool call starts it.
func TestHostedModernCatalogAfterRestart(t *testing.T) {
	env, _, state := shimEnv(t)
	server := copyServer(t, state)
	command := []string{server, "-modern", "-cache-ttl=3600000"}
	legacy := runClient(t, env, sharedCapsOptions(nil, ""), "2025-11-25", command...)
	modern := runClient(t, env, sharedCapsOptions(nil, ""), "", command...)
	first := toolNames(t, legacy)
	if got := toolNames(t, modern); !slices.Equal(got, first) || !slices.Contains(first, "echo") {
		t.Fatalf("tools: legacy %v, modern %v", first, got)
	}
	legacy.Close()
	modern.Close()
	waitCatalogued(t, env, 1)
	stopDaemon(t, env)
	waitScriptGone(t, "hostedserver", server)

	// A new daemon: both clients are answered from the catalog.
	legacy = runClient(t, env, sharedCapsOptions(nil, ""), "2025-11-25", command...)
	if res := legacy.InitializeResult(); res.ProtocolVersion != "2025-11-25" || res.ServerInfo == nil || res.ServerInfo.Name != "hostedserver" ||
		res.Instructions != "the tests' own hosted server" {
		t.Fatalf("legacy initialize from the catalog: %+v", res)
	}
	modern = runClient(t, env, sharedCapsOptions(nil, ""), "", command...)
	if res := modern.InitializeResult(); res.ProtocolVersion != "2026-07-28" || res.ServerInfo == nil || res.ServerInfo.Name != "hostedserver" {
		t.Fatalf("modern server/discover from the catalog: %+v", res)
	}
	for name, cs := range map[string]*mcp.ClientSession{"legacy": legacy, "modern": modern} {
		if got := toolNames(t, cs); !slices.Equal(got, first) {
			t.Fatalf("%s listed %v from the catalog, first run %v", name, got, first)
		}
	}
	if pids := processesOf(server); len(pids) != 0 {
		t.Fatalf("the server was started (pids %v) for initialize, server/discover and tools/list", pids)
	}
	out, _ := callText(t, legacy, "echo", map[string]any{"text": "x"})
	if !strings.HasPrefix(out, "x pid=") {
		t.Fatalf("echo: %q", out)
	}
	if pids := processesOf(server); len(pids) != 1 {
		t.Fatalf("processes after the first call: %v", pids)
	}
	if out2, _ := callText(t, modern, "echo", map[string]any{"text": "x"}); out2 != out {
		t.Fatalf("the modern client's call went to another upstream: %q, legacy %q", out2, out)
	}
}

// `hearthd restart` while a legacy and a modern client use a server that
// speaks only 2026-07-28: the new daemon serves the same process, whose
// state (its count of calls) goes on, and a list change the server
// announces after the hand-over reaches every client (the legacy one as
// the 2025 notification, the modern ones on their listens, which their
// shims sent the new daemon again, whether they relay or handed their
// client's stdio to the daemon).
func TestHostedModernUpstreamOutlivesRestart(t *testing.T) {
	env, runtime, state := shimEnv(t)
	server := copyServer(t, state)
	changed := make(chan string, 8)
	legacy := runClient(t, env, sharedCapsOptions(changed, "legacy"), "2025-11-25", server, "-modern")
	modern := runClient(t, env, sharedCapsOptions(changed, "modern"), "", server, "-modern")
	// A modern client whose shim relays (not handing its stdio to the
	// daemon): its shim sends the new daemon the client's open listen
	// again itself.
	relayed := runClient(t, append(env[:len(env):len(env)], "HEARTH_SHIM_RELAY=1"), sharedCapsOptions(changed, "relayed"), "", server, "-modern")
	if v := modern.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the modern client negotiated %q", v)
	}
	out, _ := callText(t, legacy, "count", nil)
	calls, _, pid := countReply(t, out)
	out, _ = callText(t, modern, "count", nil)
	if c, _, p := countReply(t, out); p != pid || c != calls+1 {
		t.Fatalf("modern count %q after legacy's calls=%d pid=%d", out, calls, pid)
	}
	before := daemonsIn(runtime)

	if out, code := runHearthdCmd(t, env, "restart"); code != 0 || !strings.Contains(out, "restarted hearthd") {
		t.Fatalf("hearthd restart: %d %s", code, out)
	}
	if after := daemonsIn(runtime); len(after) != 1 || len(before) != 1 || after[0] == before[0] {
		t.Fatalf("daemons before %v, after %v", before, after)
	}
	out, _ = callText(t, legacy, "count", nil)
	if c, _, p := countReply(t, out); p != pid || c != calls+2 {
		t.Fatalf("legacy count after the restart: %q, want calls=%d pid=%d", out, calls+2, pid)
	}
	out, _ = callText(t, modern, "count", nil)
	if c, _, p := countReply(t, out); p != pid || c != calls+3 {
		t.Fatalf("modern count after the restart: %q, want calls=%d pid=%d", out, calls+3, pid)
	}
	if now := processesOf(server); len(now) != 1 || now[0] != pid {
		t.Fatalf("upstreams after the restart: %v, want [%d]", now, pid)
	}
	// Nothing heard before the change.
	for len(changed) > 0 {
		<-changed
	}
	if out, _ := callText(t, legacy, "add_tool", map[string]any{"text": "late"}); out != "added late" {
		t.Fatalf("add_tool: %q", out)
	}
	heard := map[string]bool{}
	deadline := time.After(20 * time.Second)
	for !heard["legacy"] || !heard["modern"] || !heard["relayed"] {
		select {
		case who := <-changed:
			heard[who] = true
		case <-deadline:
			t.Fatalf("tools/list_changed after the hand-over reached %v", heard)
		}
	}
	for name, cs := range map[string]*mcp.ClientSession{"legacy": legacy, "modern": modern, "relayed": relayed} {
		if got := toolNames(t, cs); !slices.Contains(got, "late") {
			t.Fatalf("%s: tools after the change %v", name, got)
		}
	}
}
