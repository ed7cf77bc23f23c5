//go:build unix

package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingOverHTTP starts server-everything from npm on a fresh
// loopback port in mode (streamableHttp or sse) and returns its URL.
func everythingOverHTTP(t *testing.T, mode, path string) string {
	t.Helper()
	server := npmServer(t, "server-everything")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(node, server, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("server-everything never listened")
		}
	}
	return fmt.Sprintf("http://127.0.0.1:%d%s", port, path)
}

func listedTools(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// A remote server behind `hearth run --url`: server-everything over its
// Streamable HTTP and its 2024-11-05 SSE transport. Two Go SDK clients
// through hearth list the tools the SDK lists connecting to the server
// itself (in order of name), share one hosted instance (one remote session), get their own
// answers and their own progress, and hearthd status shows the instance
// with its URL.
func TestRunURLServerEverything(t *testing.T) {
	for _, mode := range []struct{ arg, path string }{{"streamableHttp", "/mcp"}, {"sse", "/sse"}} {
		t.Run(mode.arg, func(t *testing.T) {
			url := everythingOverHTTP(t, mode.arg, mode.path)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var transport mcp.Transport = &mcp.StreamableClientTransport{Endpoint: url}
			if mode.arg == "sse" {
				transport = &mcp.SSEClientTransport{Endpoint: url}
			}
			direct, err := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil).Connect(ctx, transport, nil)
			if err != nil {
				t.Fatal(err)
			}
			listed := listedTools(t, direct)
			direct.Close()
			want := asHearthLists(listed)

			d := startDaemon(t)
			a := runClientWith(t, d.cmd.Env, nil, "", []string{"--url", url})
			b := runClientWith(t, d.cmd.Env, nil, "", []string{"--url", url})
			if got := listedTools(t, a); len(want) == 0 || !slices.Equal(got, want) {
				t.Fatalf("through hearth run --url %v, directly %v", got, want)
			}
			if got := listedTools(t, b); !slices.Equal(got, want) {
				t.Fatalf("the second client: %v, directly %v", got, want)
			}
			for i, cs := range []*mcp.ClientSession{a, b} {
				text, isErr := callText(t, cs, "echo", map[string]any{"message": fmt.Sprint("client ", i)})
				if isErr || text != fmt.Sprintf("Echo: client %d", i) {
					t.Fatalf("echo of client %d: %q (error %v)", i, text, isErr)
				}
			}
			var progress []float64
			cl := mcp.NewClient(&mcp.Implementation{Name: "progress", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
					progress = append(progress, r.Params.Progress)
				}})
			cmd := exec.Command(bin.hearth, "run", "--url", url)
			cmd.Env = d.cmd.Env
			p, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 1, "steps": 2}}
			if !slices.Contains(listed, params.Name) {
				params.Name = "longRunningOperation"
			}
			params.SetProgressToken("p1")
			if _, err := p.CallTool(ctx, params); err != nil {
				t.Fatal(err)
			}
			if len(progress) == 0 {
				t.Fatal("no progress reached the client that asked for it")
			}
			out, code := runHearthdCmd(t, d.cmd.Env, "status", "--json")
			var st struct {
				Hosted []map[string]any `json:"hosted"`
			}
			if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
				t.Fatalf("hearthd status --json: %v\n%s", err, out)
			}
			if len(st.Hosted) != 1 || st.Hosted[0]["url"] != strings.TrimSuffix(url, "/") || st.Hosted[0]["clients"] != float64(3) {
				t.Fatalf("status: want one instance of %s with 3 clients, got %v", url, st.Hosted)
			}
		})
	}
}

// Real clients reach a remote server through `hearth run --url` and list
// the tools they list connecting to it themselves: the TypeScript SDK's
// stdio client (against its own Streamable HTTP client), and `claude mcp
// list` of each Claude Code CLI the tests use, for a ~/.claude.json with
// the server as a `type: http` entry and as `hearth run --url`: both
// connect.
func TestRealClientsReachRemoteThroughRunURL(t *testing.T) {
	url := everythingOverHTTP(t, "streamableHttp", "/mcp")
	t.Run("typescript-sdk", func(t *testing.T) {
		d := startDaemon(t)
		raw := runNodeScript(t, d.cmd.Env, "remote_lists.mjs", url, bin.hearth)
		var out struct{ Direct, Hearth []string }
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if len(out.Direct) == 0 || !slices.Equal(asHearthLists(out.Direct), out.Hearth) {
			t.Fatalf("through hearth run --url %v, directly %v", out.Hearth, out.Direct)
		}
	})
	for _, cli := range claudeCLIs(t) {
		t.Run("claude-"+cli.version, func(t *testing.T) {
			home, runtime := shortTempDir(t), shortTempDir(t)
			t.Cleanup(func() { killDaemonsIn(runtime); killDaemonsOfHome(home) })
			servers := map[string]any{
				"direct":    map[string]any{"type": "http", "url": url},
				"viahearth": map[string]any{"type": "stdio", "command": "hearth", "args": []string{"run", "--url", url}},
			}
			cfg, _ := json.MarshalIndent(map[string]any{"numStartups": 3, "mcpServers": servers}, "", "  ")
			if err := os.WriteFile(home+"/.claude.json", cfg, 0o600); err != nil {
				t.Fatal(err)
			}
			got, text := claudeMCPList(t, cli.path, home, claudeEnv(home, runtime))
			if !strings.Contains(got["direct"], "Connected") || got["viahearth"] != got["direct"] {
				t.Fatalf("claude mcp list: %v\n%s", got, text)
			}
		})
	}
}

// `hearthd adopt` moves a Claude Code `type: http` entry behind `hearth run
// --url`: with a credential in its headers it is left alone unless
// --secrets, whose dry run changes nothing and says what would move; with
// --write the credential goes into the store (hearthd secret list names
// it), the file names it as ${secret:NAME} and holds it no more; --undo
// restores the file; adopted again, `claude mcp list` connects through
// hearth.
func TestAdoptRemoteEntryWithSecrets(t *testing.T) {
	url := everythingOverHTTP(t, "streamableHttp", "/mcp")
	cli := claudeCLIs(t)[0]
	home, runtime := shortTempDir(t), shortTempDir(t)
	t.Cleanup(func() { killDaemonsIn(runtime); killDaemonsOfHome(home) })
	const key = "lit3ral-api-k3y-5f4e3d"
	cfg := fmt.Sprintf(`{"numStartups": 3, "mcpServers": {"everything": {"type": "http", "url": %q, "headers": {"X-Api-Key": %q}}}}`, url, key)
	path := home + "/.claude.json"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := runAdopt(t, home, "adopt", "--write"); code != 0 || !strings.Contains(out, "hearthd adopt --secrets") {
		t.Fatalf("adopt --write without --secrets: %d\n%s", code, out)
	}
	if out, code := runAdopt(t, home, "adopt", "--secrets"); code != 0 || !strings.Contains(out, "would move headers.X-Api-Key of everything") || strings.Contains(out, key) {
		t.Fatalf("adopt --secrets (dry run): %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(path); string(b) != cfg {
		t.Fatalf("the dry run changed the file:\n%s", b)
	}
	if out, code := runAdopt(t, home, "adopt", "--secrets", "--write"); code != 0 || !strings.Contains(out, "Wrote ") || strings.Contains(out, key) {
		t.Fatalf("adopt --secrets --write: %d\n%s", code, out)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), key) || !strings.Contains(string(b), `"X-Api-Key: ${secret:everything-x-api-key}"`) || !strings.Contains(string(b), `"--url"`) {
		t.Fatalf("the adopted file:\n%s", b)
	}
	if out, code := runAdopt(t, home, "secret", "list"); code != 0 || strings.TrimSpace(out) != "everything-x-api-key" {
		t.Fatalf("hearthd secret list: %d %q", code, out)
	}
	if out, code := runAdopt(t, home, "adopt", "--undo"); code != 0 {
		t.Fatalf("adopt --undo: %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(path); string(b) != cfg {
		t.Fatalf("--undo left:\n%s", b)
	}
	// Again, and Claude Code (which rewrites its file as it runs) connects.
	if out, code := runAdopt(t, home, "adopt", "--secrets", "--write"); code != 0 {
		t.Fatalf("adopt --secrets --write again: %d\n%s", code, out)
	}
	got, text := claudeMCPList(t, cli.path, home, claudeEnv(home, runtime))
	if !strings.Contains(got["everything"], "Connected") || !strings.Contains(text, "hearth run") {
		t.Fatalf("claude mcp list after adopt: %v\n%s", got, text)
	}
}
