//go:build unix

package test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func shimSession(t *testing.T, env []string) *mcp.ClientSession {
	t.Helper()
	return shimSessionIn(t, env, "", nil)
}

// shimSessionIn connects client (a plain Go SDK client when nil) through a
// shim started in dir ("" for the test's own), as an editor opened there.
func shimSessionIn(t *testing.T, env []string, dir string, client *mcp.Client) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(bin.hearth)
	cmd.Env = env
	cmd.Dir = dir
	if client == nil {
		client = mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	}
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// TestMemorySharedByClients: what one editor's client remembers, another's
// finds, through one daemon; an over-long text gets a small INVALID_REQUEST
// reply ("content exceeds max length", under 1 KiB), never its input back.
func TestMemorySharedByClients(t *testing.T) {
	env, _, _ := shimEnv(t)
	a, b := shimSession(t, env), shimSession(t, env)
	res := callTool(t, a, "add_memory", map[string]any{"text": "The staging database moved to port 5433 on Tuesday", "metadata": map[string]any{"tags": []string{"ops"}}})
	st, _ := res.StructuredContent.(map[string]any)
	if res.IsError || st["memory_id"] == nil {
		t.Fatalf("add_memory: %+v", res)
	}
	res = callTool(t, b, "search_memory", map[string]any{"query": "staging database port", "filters": map[string]any{"tags": []string{"ops"}}})
	body, _ := json.Marshal(res.StructuredContent)
	if res.IsError || !strings.Contains(string(body), st["memory_id"].(string)) {
		t.Fatalf("search_memory from the other client: %s", body)
	}
	res = callTool(t, b, "add_memory", map[string]any{"text": strings.Repeat("x", 100001)})
	body, _ = json.Marshal(res)
	if !res.IsError || !strings.Contains(string(body), "content exceeds max length") || len(body) > 1024 {
		t.Fatalf("over-long text (%d bytes): %s", len(body), body)
	}
}

// TestMemoryStoreUnavailable: a corrupt store answers JSON-RPC -32000 with
// the fixed "Database connection failed. Please check SQLite is running."
// (no path in it), and the daemon keeps serving everything else.
func TestMemoryStoreUnavailable(t *testing.T) {
	env, _, state := shimEnv(t)
	home := filepath.Join(state, "home")
	os.MkdirAll(home, 0o700)
	os.WriteFile(filepath.Join(home, ".format_version"), []byte("1.0\n0.1.0+test\n"), 0o600)
	os.WriteFile(filepath.Join(home, "memory.db"), []byte(strings.Repeat("this is not an SQLite database ", 100)), 0o600)
	cs := shimSession(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_memory", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), "Database connection failed. Please check SQLite is running.") || strings.Contains(err.Error(), home) {
		t.Fatalf("want -32000 without a path, got %v", err)
	}
	if res := callTool(t, cs, "daemon_status", map[string]any{}); res.IsError {
		t.Fatalf("daemon_status after a store failure: %+v", res)
	}
}
