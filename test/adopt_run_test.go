//go:build unix

package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonc"
	"github.com/hearth-mcp/hearth/pkg/owner"
)

// clientEntry is what a client reads from a config entry to start a server.
type clientEntry struct {
	Command string            `json:"command"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
}

// readEntry reads the entry of server name from a config file (JSONC for
// VS Code's), under key and, for a project of ~/.claude.json, project.
func readEntry(t *testing.T, path, key, name string) clientEntry {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	root, err := jsonc.Parse(src, jsonc.JSONC)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	n := root.Get(key).Get(name)
	if n == nil {
		t.Fatalf("%s has no server %s", path, name)
	}
	var e clientEntry
	// Each member's span is plain JSON (comments lie between members).
	for _, m := range n.Members {
		var err error
		switch m.Key {
		case "command":
			err = json.Unmarshal(src[m.Value.Start:m.Value.End], &e.Command)
		case "args":
			err = json.Unmarshal(src[m.Value.Start:m.Value.End], &e.Args)
		case "env":
			err = json.Unmarshal(src[m.Value.Start:m.Value.End], &e.Env)
		case "cwd":
			err = json.Unmarshal(src[m.Value.Start:m.Value.End], &e.Cwd)
		}
		if err != nil {
			t.Fatalf("%s: %s.%s: %v", path, name, m.Key, err)
		}
	}
	return e
}

// listTools starts the entry as a client does, with the TypeScript SDK's
// StdioClientTransport and its default environment (HOME, PATH, ...
// copied from the client) under the entry's env, and returns the server's
// name and tool names.
func listTools(t *testing.T, clientEnv []string, e clientEntry) (string, []string) {
	t.Helper()
	spec, _ := json.Marshal(e)
	out := runNodeScript(t, clientEnv, "entry.mjs", string(spec))
	var got struct {
		Server string
		Tools  []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("entry.mjs output %q: %v", out, err)
	}
	return got.Server, got.Tools
}

// TestAdoptedEntriesAnswerThroughHearth: the stdio entries of Claude Code,
// VS Code and Cursor configs, rewritten by `hearthd adopt --write` and
// started exactly as the client starts them (command "hearth", the new
// args, the entry's env and cwd), answer tools/list through hearth with
// the tools they listed when started directly, under the same names (one
// of them with the sharing mode adopt wrote for it, --share client).
func TestAdoptedEntriesAnswerThroughHearth(t *testing.T) {
	needNode(t)
	server, _ := filepath.Abs(filepath.Join("ts", "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js"))
	_, err := os.Stat(server)
	needOrSkip(t, err == nil, "@modelcontextprotocol/server-memory in test/ts/node_modules")
	node, _ := exec.LookPath("node")

	home := t.TempDir()
	project := filepath.Join(home, "src", "app")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	serverJSON, _ := json.Marshal(server)
	files := map[string]string{
		".claude.json": `{
  "numStartups": 3,
  "mcpServers": {
    "memory": {
      "type": "stdio",
      "command": "node",
      "args": [` + string(serverJSON) + `],
      "env": {"MEMORY_FILE_PATH": "` + filepath.Join(home, "claude.jsonl") + `"}
    },
    "remote": {"type": "http", "url": "https://example.com/mcp"}
  }
}
`,
		".config/Code/User/mcp.json": `// VS Code's user servers
{
	"servers": {
		// the memory graph, one per workspace
		"memory": {
			"type": "stdio",
			"command": "node",
			"args": [
				` + string(serverJSON) + `
			],
			"env": {"MEMORY_FILE_PATH": "` + filepath.Join(home, "vscode.jsonl") + `"},
			"cwd": "` + project + `",
		},
	},
}
`,
		".cursor/mcp.json": `{"mcpServers": {"graph": {"command": "node", "args": [` + string(serverJSON) + `], "cwd": "` + project + `", "env": {"MEMORY_FILE_PATH": "` + filepath.Join(home, "cursor.jsonl") + `"}}}}`,
	}
	for p, content := range files {
		p = filepath.Join(home, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	entries := []struct{ file, key, name string }{
		{".claude.json", "mcpServers", "memory"},
		{".config/Code/User/mcp.json", "servers", "memory"},
		{".cursor/mcp.json", "mcpServers", "graph"},
	}
	// The client's own environment: its HOME, and a PATH with node and
	// hearth on it, as for a user who installed both.
	clientEnv := []string{"HOME=" + home, "PATH=" + bin.dir + ":" + filepath.Dir(node) + ":/usr/bin:/bin"}
	t.Cleanup(func() { stopOwner(t, filepath.Join(home, ".local", "share", "hearth")) })

	type listing struct {
		server string
		tools  []string
	}
	before := map[string]listing{}
	for _, e := range entries {
		entry := readEntry(t, filepath.Join(home, e.file), e.key, e.name)
		s, tools := listTools(t, clientEnv, entry)
		if len(tools) == 0 {
			t.Fatalf("%s %s lists no tools started directly", e.file, e.name)
		}
		before[e.file] = listing{s, tools}
	}

	out, code := runAdopt(t, home, "adopt", "--write", "--share", "graph=client")
	if code != 0 || strings.Count(out, "Wrote ") != 3 {
		t.Fatalf("adopt --write exit %d:\n%s", code, out)
	}
	for _, e := range entries {
		entry := readEntry(t, filepath.Join(home, e.file), e.key, e.name)
		// Each entry sets MEMORY_FILE_PATH: the shim is told its name, and
		// the entry's own name.
		want := []string{"run", "--name", e.name, "--env", "MEMORY_FILE_PATH", "--", "node"}
		if e.name == "graph" {
			want = []string{"run", "--share", "client", "--name", e.name, "--env", "MEMORY_FILE_PATH", "--", "node"}
		}
		if entry.Command != "hearth" || !slices.Equal(entry.Args[:len(want)], want) {
			t.Fatalf("%s %s was not moved: %+v", e.file, e.name, entry)
		}
		s, tools := listTools(t, clientEnv, entry)
		if want := before[e.file]; s != want.server || !slices.Equal(tools, asHearthLists(want.tools)) {
			t.Errorf("%s %s through hearth: server %q tools %v; directly: %q %v", e.file, e.name, s, tools, want.server, want.tools)
		}
	}
	// Three upstreams were hosted, one per entry: each entry sets its own
	// MEMORY_FILE_PATH, which is part of what names an instance; each has
	// its stderr log in the state directory.
	logs, _ := filepath.Glob(filepath.Join(home, ".local", "state", "hearth", "servers", "*.log"))
	if len(logs) != 3 {
		t.Errorf("hosted server logs: %v, want one per entry", logs)
	}
	st, _ := runAdopt(t, home, "status")
	if !regexpMatch(`Claude Code\s+~/\.claude\.json\s+2\s+2\s+0\s+0`, st) || !regexpMatch(`Cursor\s+~/\.cursor/mcp\.json\s+1\s+1\s+0\s+0`, st) {
		t.Errorf("status after adopt:\n%s", st)
	}
}

// stopOwner kills the daemon that owns the data directory home (one the
// shims autostarted), and so its hosted servers.
func stopOwner(t *testing.T, home string) {
	rec, state, err := owner.Find(home)
	if err != nil || state != owner.Serving || rec.PID <= 0 {
		return
	}
	syscall.Kill(rec.PID, syscall.SIGTERM)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if syscall.Kill(rec.PID, 0) != nil {
			return
		}
	}
	syscall.Kill(rec.PID, syscall.SIGKILL)
}
