//go:build unix

package test

//lint:file-ignore SA1019 the era bridge turns a 2025 server's sampling requests (deprecated in 2026-07-28) into input_required results, which these clients answer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The era bridge (docs/decisions/0072-era-bridge.md): go-sdk clients that
// probe with server/discover (so speak 2026-07-28) in front of a 2025-only
// upstream (hostedserver without -modern) speak 2026-07-28 through hearth;
// the upstream's sampling request reaches each as an input_required result
// on its own call, which the SDK answers and retries; two clients at once,
// each sampled by its own handler, on one upstream.
func TestHostedBridgeGoSDKClientsSampleThroughInputRequired(t *testing.T) {
	env, _, _ := shimEnv(t)
	server := filepath.Join(bin.dir, "hostedserver")
	sampler := func(name string) *mcp.ClientOptions {
		return &mcp.ClientOptions{CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "from " + name}}, nil
		}}
	}
	a := runClient(t, env, sampler("a"), "", server)
	b := runClient(t, env, sampler("b"), "", server)
	for name, cs := range map[string]*mcp.ClientSession{"a": a, "b": b} {
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("%s negotiated %q through hearth with a 2025 upstream, want 2026-07-28", name, v)
		}
		if info := cs.InitializeResult().ServerInfo; info == nil || info.Name != "hostedserver" {
			t.Fatalf("%s: serverInfo %+v", name, info)
		}
	}
	var wg sync.WaitGroup
	for name, cs := range map[string]*mcp.ClientSession{"a": a, "b": b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One after the other within a client; the two clients at once.
			// A sampling request whose client is not certain (both with a
			// call in flight) is refused upstream by decision 0035, and the
			// tool says so: retried until it is certain.
			for i := 0; i < 3; i++ {
				for attempt := 0; ; attempt++ {
					out, isErr := callText(t, cs, "sample", map[string]any{"text": "q"})
					if !isErr && out == "sampled: from "+name {
						break
					}
					if !strings.Contains(out, "not certain") || attempt > 50 {
						t.Errorf("%s: sample %q", name, out)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if n := len(processesOf(server)); n != 1 {
		t.Fatalf("%d upstream processes, want 1", n)
	}
}

// Two sessions listing the tools of an upstream that writes them out of
// order, in an order of its own process (hostedserver -shuffle, one
// upstream per session with --share client, so no cache answers), get
// byte-identical lists, in order of name: hearth sorts each tools/list
// page (docs/decisions/0073-caching-hints-and-order.md).
func TestHostedToolOrderIsStable(t *testing.T) {
	env, _, _ := shimEnv(t)
	server := filepath.Join(bin.dir, "hostedserver")
	list := func() string {
		t.Helper()
		cmd := exec.Command(bin.hearth, "run", "--share", "client", "--", server, "-shuffle")
		cmd.Env = env
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { in.Close(); cmd.Wait() }()
		lines := bufio.NewScanner(out)
		lines.Buffer(nil, 1<<20)
		ask := func(frame string) string {
			io.WriteString(in, frame+"\n")
			done := make(chan string, 1)
			go func() {
				if lines.Scan() {
					done <- lines.Text()
				}
				close(done)
			}()
			select {
			case l := <-done:
				return l
			case <-time.After(30 * time.Second):
				t.Fatalf("no answer to %s", frame)
				return ""
			}
		}
		ask(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		return ask(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	}
	first, second := list(), list()
	var res struct {
		Result struct {
			Tools []struct{ Name string }
		}
	}
	if json.Unmarshal([]byte(first), &res) != nil || len(res.Result.Tools) < 3 {
		t.Fatalf("tools/list: %s", first)
	}
	for i := 1; i < len(res.Result.Tools); i++ {
		if res.Result.Tools[i-1].Name > res.Result.Tools[i].Name {
			t.Fatalf("tools not in order of name: %s", first)
		}
	}
	if first != second {
		t.Fatalf("two sessions' lists differ:\n%s\n%s", first, second)
	}
}

// Two TypeScript SDK v2 clients pinned to 2026-07-28 in front of
// server-everything (2025-only, over stdio) hosted by hearth, at once:
// both speak 2026-07-28 through hearth, and its sampling and elicitation
// tools complete through input_required results, each client's own
// handlers answering its own calls only.
func TestHostedBridgeTypeScriptV2Clients(t *testing.T) {
	server := npmServer(t, "server-everything")
	node, err := node22Path()
	needOrSkip(t, err == nil, fmt.Sprintf("Node 22 (npx -y node@22: %v)", err))
	// The SDK's default environment has HOME but no XDG_RUNTIME_DIR: the
	// shims find the user's daemon through the data directory under HOME.
	env, _ := startUserDaemon(t)
	out := runNodeScript(t, env, "hosted_bridge.mjs", bin.hearth, node, server)
	t.Logf("what the clients saw: %s", out)
	var got map[string]struct {
		Era, ProtocolVersion string
		Tools                []string
		Sample               []string
		Elicit               string
		Sampled, Elicited    int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, name := range []string{"alpha", "beta"} {
		g := got[name]
		if g.Era != "modern" || g.ProtocolVersion != "2026-07-28" {
			t.Fatalf("%s: era %q version %q: %s", name, g.Era, g.ProtocolVersion, out)
		}
		if !slices.Contains(g.Tools, "trigger-sampling-request") || !slices.IsSorted(g.Tools) {
			t.Fatalf("%s: tools %v", name, g.Tools)
		}
		if len(g.Sample) != 2 || g.Sampled < 2 || g.Elicited < 1 {
			t.Fatalf("%s: sampled %d, elicited %d: %s", name, g.Sampled, g.Elicited, out)
		}
		for _, s := range g.Sample {
			if !strings.Contains(s, name+" samples") || strings.Contains(s, otherName(name)) {
				t.Fatalf("%s: a sampling result not its own: %q", name, s)
			}
		}
		if !strings.Contains(g.Elicit, name+" answers") || strings.Contains(g.Elicit, otherName(name)) {
			t.Fatalf("%s: elicitation %q", name, g.Elicit)
		}
	}
	// The server goes with the daemon before the next test looks for
	// server-everything processes of its own.
	stopDaemon(t, env)
	waitScriptGone(t, "server-everything", server)
}

func otherName(name string) string {
	if name == "alpha" {
		return "beta"
	}
	return "alpha"
}
