//go:build unix

package test

//lint:file-ignore SA1019 a 2025 client of a modern upstream answers its sampling requests (deprecated in 2026-07-28), which hearth turns into inputResponses

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An upstream that speaks only 2026-07-28 (hostedserver -modern refuses
// initialize): a go-sdk client pinned to 2025-11-25 is translated (its
// sampling asked with an InputRequiredResult reaches it as a request and
// its answer is retried upstream), a go-sdk client that probes with
// server/discover speaks 2026-07-28 through hearth; one upstream serves
// both, and status shows its era.
func TestHostedModernUpstreamGoSDKClients(t *testing.T) {
	env, _, _ := shimEnv(t)
	server := filepath.Join(bin.dir, "hostedserver")
	sampler := func(name string) *mcp.ClientOptions {
		return &mcp.ClientOptions{CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "from " + name}}, nil
		}}
	}
	legacy := runClient(t, env, sampler("legacy"), "2025-11-25", server, "-modern")
	modern := runClient(t, env, sampler("modern"), "", server, "-modern")
	if v := legacy.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("legacy client negotiated %q", v)
	}
	if v := modern.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the probing client negotiated %q, want 2026-07-28", v)
	}
	pids := map[string]bool{}
	for name, cs := range map[string]*mcp.ClientSession{"legacy": legacy, "modern": modern} {
		if info := cs.InitializeResult().ServerInfo; info == nil || info.Name != "hostedserver" {
			t.Fatalf("%s: serverInfo %+v", name, info)
		}
		out, _ := callText(t, cs, "echo", map[string]any{"text": name})
		f := strings.Fields(out)
		if len(f) != 2 || f[0] != name {
			t.Fatalf("%s: echo %q", name, out)
		}
		pids[f[1]] = true
		if out, isErr := callText(t, cs, "sample", map[string]any{"text": "q"}); isErr || out != "sampled: from "+name {
			t.Fatalf("%s: sample %q", name, out)
		}
	}
	if len(pids) != 1 || len(processesOf(server)) != 1 {
		t.Fatalf("upstreams: %v, processes %v", pids, processesOf(server))
	}
	raw := statusJSON(t, env)
	var st struct {
		Clients []struct {
			Name, Hosted    string
			ProtocolVersion string `json:"protocol_version"`
		}
		Hosted []struct{ Era string } `json:"hosted"`
	}
	if json.Unmarshal(raw, &st) != nil || len(st.Hosted) != 1 || st.Hosted[0].Era != "2026-07-28" {
		t.Fatalf("status: %s", raw)
	}
	versions := map[string]bool{}
	for _, c := range st.Clients {
		if c.Name == "hosted-e2e" && c.Hosted != "" {
			versions[c.ProtocolVersion] = true
		}
	}
	if !versions["2025-11-25"] || !versions["2026-07-28"] {
		t.Fatalf("the clients' versions in status: %s", raw)
	}
}

// The TypeScript SDK v1 client (default environment, initialize) and the
// v2 client in auto mode on one modern-only upstream: v1 sees the
// upstream's serverInfo and instructions, its sampling request, progress
// and a list change; v2 ends up modern.
func TestHostedModernUpstreamTypeScriptClients(t *testing.T) {
	// The SDKs' default environment has HOME but no XDG_RUNTIME_DIR: the
	// shims find the user's daemon through the data directory under HOME.
	env, _ := startUserDaemon(t)
	raw := runNodeScript(t, env, "hosted_modern.mjs", bin.hearth, filepath.Join(bin.dir, "hostedserver"))
	var out struct {
		V1 struct {
			Server       struct{ Name string }
			Instructions string
			Echo, Sample string
			Sleep        string
			Progress     []float64
			ListChanged  int
			Tools        []string
		}
		V2 struct {
			Era, ProtocolVersion string
			Server               struct{ Name string }
			Echo                 string
			Tools                []string
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	v1, v2 := out.V1, out.V2
	if v1.Server.Name != "hostedserver" || v1.Instructions != "the tests' own hosted server" || !strings.HasPrefix(v1.Echo, "v1 pid=") ||
		v1.Sample != "sampled: v1 answers q1" || v1.Sleep != "slept" || len(v1.Progress) != 1 {
		t.Fatalf("v1: %s", raw)
	}
	if v1.ListChanged == 0 || !slices.Contains(v1.Tools, "added") {
		t.Fatalf("v1 list change: %s", raw)
	}
	if v2.Era != "modern" || v2.ProtocolVersion != "2026-07-28" || v2.Server.Name != "hostedserver" || !strings.HasPrefix(v2.Echo, "v2 pid=") ||
		!slices.Contains(v2.Tools, "sample") {
		t.Fatalf("v2: %s", raw)
	}
	if strings.TrimPrefix(v1.Echo, "v1 ") != strings.TrimPrefix(v2.Echo, "v2 ") {
		t.Fatalf("two upstreams: %q %q", v1.Echo, v2.Echo)
	}
}

// A server that refuses initialize and the server/discover probe alike
// gives each client a clear error naming the server, both refusals and its
// log; another instance of the same daemon keeps serving.
func TestHostedUpstreamRefusingBothEras(t *testing.T) {
	env, _, _ := shimEnv(t)
	server := filepath.Join(bin.dir, "hostedserver")
	good := runClient(t, env, nil, "2025-11-25", server, "-modern")
	cmd := exec.Command(bin.hearth, "run", "--", server, "-refuse")
	cmd.Env = env
	cl := mcp.NewClient(&mcp.Implementation{Name: "refused", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		t.Fatal("a server refusing both eras was connected")
	}
	for _, want := range []string{"hostedserver -refuse refused initialize (", "and is no 2026-07-28 server either (server/discover: ", "servers/hostedserver-", ".log"} { // the log is NAME-KEY.log, no argument in it
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if out, _ := callText(t, good, "echo", map[string]any{"text": "still"}); !strings.HasPrefix(out, "still pid=") {
		t.Fatalf("the other instance: %q", out)
	}
}
