//go:build unix

package test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The sample configs of each client, in their real formats: what
// `hearthd adopt` is run on in a temporary HOME.
const (
	sampleClaudeJSON = `{
  "numStartups": 41,
  "theme": "dark",
  "mcpServers": {
    "memory": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-memory"
      ],
      "env": {
        "MEMORY_FILE_PATH": "/tmp/adopt-memory.jsonl"
      }
    },
    "hearth": {
      "type": "stdio",
      "command": "hearth",
      "args": []
    },
    "sentry": {
      "type": "http",
      "url": "https://mcp.sentry.dev/mcp"
    }
  },
  "projects": {
    "/home/me/app": {
      "allowedTools": [],
      "mcpServers": {
        "app-db": {"type": "stdio", "command": "uvx", "args": ["mcp-server-sqlite", "--db-path", "app.db"], "env": {}, "cwd": "/home/me/app"},
        "context": {"type": "sse", "url": "http://localhost:8931/sse"}
      },
      "hasTrustDialogAccepted": true
    }
  }
}
`
	sampleDesktopLinux = `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/Documents"]
    }
  },
  "globalShortcut": "Ctrl+Space"
}
`
	sampleDesktopMac = `{"mcpServers":{"everything":{"command":"npx","args":["-y","@modelcontextprotocol/server-everything"]}}}`
	sampleCursor     = `{
	"mcpServers": {
		"playwright": {
			"command": "npx",
			"args": ["@playwright/mcp@latest"]
		},
		"linear": {
			"url": "https://mcp.linear.app/sse"
		}
	}
}
`
	sampleVSCodeUser = `// MCP servers for every VS Code workspace
{
	"inputs": [
		{
			"type": "promptString",
			"id": "github-token",
			"description": "GitHub personal access token",
			"password": true
		}
	],
	"servers": {
		// The memory graph, with its file in the home.
		"memory": {
			"type": "stdio",
			"command": "npx",
			"args": ["-y", "@modelcontextprotocol/server-memory"],
			"env": {
				"MEMORY_FILE_PATH": "${env:HOME}/memory.jsonl",
				"GITHUB_TOKEN": "${input:github-token}"
			}
		},
		/* remote: nothing to host */
		"github": {
			"type": "http",
			"url": "https://api.githubcopilot.com/mcp/",
			"headers": {"Authorization": "Bearer ${input:github-token}"}
		},
	},
}
`
	sampleProjectMCP = `{
  "mcpServers": {
    "docs": {
      "command": "node",
      "args": ["tools/docs-server.js"],
      "cwd": "${workspaceFolder}"
    }
  }
}
`
	sampleProjectVSCode = `{
	// this workspace's servers
	"servers": {
		"lint": {"type": "stdio", "command": "${workspaceFolder}/bin/lint-mcp", "args": ["--stdio"]}
	}
}
`
	sampleBrokenCursor = `{
  "mcpServers": {
    "half": {"command": "npx", "args": ["-y", "x"]
  }
`
)

// adoptHome writes the sample configs into a fresh HOME and a project
// directory in it, and returns both.
func adoptHome(t *testing.T) (home, project string) {
	t.Helper()
	home = t.TempDir()
	project = filepath.Join(home, "src", "app")
	for path, content := range map[string]string{
		".claude.json": sampleClaudeJSON,
		".config/Claude/claude_desktop_config.json":                     sampleDesktopLinux,
		"Library/Application Support/Claude/claude_desktop_config.json": sampleDesktopMac,
		".cursor/mcp.json":                sampleCursor,
		".config/Code/User/mcp.json":      sampleVSCodeUser,
		"src/app/.mcp.json":               sampleProjectMCP,
		"src/app/.vscode/mcp.json":        sampleProjectVSCode,
		"src/app/.cursor/mcp.json":        sampleBrokenCursor,
		"src/app/README.md":               "not a config\n",
		".config/Code/User/settings.json": "{}\n",
	} {
		p := filepath.Join(home, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home, project
}

// snapshot is every file under dir and its bytes.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[strings.TrimPrefix(p, dir+"/")] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameFiles(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%s: %s is gone", what, p)
		} else if g != w {
			t.Errorf("%s: %s changed:\n%s", what, p, g)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s appeared", what, p)
		}
	}
}

// runAdopt runs hearthd with HOME set to home and returns its stdout and
// exit code.
func runAdopt(t *testing.T, home string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin.hearthd, args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "CLAUDE_CONFIG_DIR=",
		"XDG_RUNTIME_DIR="+shortTempDir(t), "HEARTH_HOME=", "MCP_SOCKET_PATH=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if stderr.Len() > 0 {
		t.Logf("hearthd %s stderr:\n%s", strings.Join(args, " "), stderr.String())
	}
	return stdout.String(), code
}

// TestAdoptDryRunWriteTwiceUndo: the dry run shows every client's changes
// and changes no byte; --write rewrites each stdio entry and each remote
// one whose headers need nothing of the client (and nothing else), refuses the broken file and leaves it as it is; a second --write
// changes nothing; --undo restores every file byte for byte and leaves no
// backup behind.
func TestAdoptDryRunWriteTwiceUndo(t *testing.T) {
	home, project := adoptHome(t)
	before := snapshot(t, home)

	out, code := runAdopt(t, home, "adopt", "--project", project, "--share", "playwright=client")
	if code != 1 { // the broken file is refused
		t.Fatalf("dry run exit %d:\n%s", code, out)
	}
	for _, want := range []string{
		"--- ~/.claude.json\n",
		`+        "run",` + "\n",
		`+      "args": ["run", "--name", "filesystem", "--env=", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/Documents"]`,
		`+{"mcpServers":{"everything":{"command":"hearth","args":["run","--name","everything","--env=","--","npx","-y","@modelcontextprotocol/server-everything"]}}}`,
		`+			"args": ["run", "--share", "client", "--name", "playwright", "--env=", "--", "npx", "@playwright/mcp@latest"]`,
		`+			"args": ["run", "--name", "memory", "--env", "MEMORY_FILE_PATH,GITHUB_TOKEN", "--", "npx", "-y", "@modelcontextprotocol/server-memory"],`,
		`+		"lint": {"type": "stdio", "command": "hearth", "args": ["run", "--name", "lint", "--env=", "--", "${workspaceFolder}/bin/lint-mcp", "--stdio"]}`,
		`+      "args": ["run", "--name", "docs", "--env=", "--", "node", "tools/docs-server.js"],`,
		"Claude Code     ~/.claude.json                                                   memory",
		"app-db", "[project /home/me/app]",
		"hearth's own server", "moves behind hearth run --url", "left alone: http server; its headers use the client's variables",
		`+        "context": {"type": "stdio", "command": "hearth", "args": ["run", "--name=context", "--url", "http://localhost:8931/sse"]}`,
		"moves behind hearth (sharing: client)",
		"Refused ~/src/app/.cursor/mcp.json: it does not parse: line 2, column 17: an object opened here is never closed",
		"Dry run: nothing was changed.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Fatalf("dry run output:\n%s", out)
	}
	sameFiles(t, "after the dry run", snapshot(t, home), before)

	out, code = runAdopt(t, home, "adopt", "--write", "--project", project, "--share", "playwright=client")
	if code != 1 || strings.Count(out, "Wrote ") != 7 {
		t.Fatalf("--write exit %d:\n%s", code, out)
	}
	written := snapshot(t, home)
	if written["src/app/.cursor/mcp.json"] != sampleBrokenCursor {
		t.Fatal("the broken file was touched")
	}
	backups := 0
	for p, content := range written {
		if !strings.Contains(p, ".hearth-backup-") {
			continue
		}
		backups++
		orig := p[:strings.Index(p, ".hearth-backup-")]
		if content != before[orig] {
			t.Errorf("backup %s is not %s as it was", p, orig)
		}
	}
	if backups != 7 {
		t.Fatalf("%d backups, want one per written file", backups)
	}
	// Only the values that move changed: the rest of each file is as it was.
	vs := written[".config/Code/User/mcp.json"]
	for _, kept := range []string{"// MCP servers for every VS Code workspace", "/* remote: nothing to host */", `"GITHUB_TOKEN": "${input:github-token}"`, `"MEMORY_FILE_PATH": "${env:HOME}/memory.jsonl"`, "\t\t},\n\t},\n}\n"} {
		if !strings.Contains(vs, kept) {
			t.Errorf("VS Code's mcp.json lost %q:\n%s", kept, vs)
		}
	}
	if !strings.Contains(written[".claude.json"], `"numStartups": 41,
  "theme": "dark",`) || !strings.Contains(written[".claude.json"], `"app-db": {"type": "stdio", "command": "hearth", "args": ["run", "--name", "app-db", "--env=", "--", "uvx", "mcp-server-sqlite", "--db-path", "app.db"], "env": {}, "cwd": "/home/me/app"}`) {
		t.Errorf(".claude.json:\n%s", written[".claude.json"])
	}

	out, code = runAdopt(t, home, "adopt", "--write", "--project", project, "--share", "playwright=client")
	if code != 1 || strings.Contains(out, "Wrote ") || !strings.Contains(out, "Nothing to change.") || !strings.Contains(out, "already behind hearth") {
		t.Fatalf("second --write exit %d:\n%s", code, out)
	}
	sameFiles(t, "after the second --write", snapshot(t, home), written)

	out, _ = runAdopt(t, home, "status")
	for _, want := range []string{"client configs (5):", "~/.claude.json", "~/.cursor/mcp.json"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if !regexpMatch(`Claude Code\s+~/\.claude\.json\s+5\s+5\s+0\s+0`, out) {
		t.Errorf("status does not count ~/.claude.json's servers as 5, 5 through hearth (its remote ones behind hearth run --url), 0 to move, 0 remote:\n%s", out)
	}

	out, code = runAdopt(t, home, "adopt", "--undo", "--project", project)
	if code != 0 || strings.Count(out, "Restored ") != 7 {
		t.Fatalf("--undo exit %d:\n%s", code, out)
	}
	sameFiles(t, "after --undo", snapshot(t, home), before)
	if out, code = runAdopt(t, home, "adopt", "--undo", "--project", project); code != 0 || !strings.Contains(out, "Nothing to undo") {
		t.Fatalf("second --undo exit %d:\n%s", code, out)
	}
}

// TestAdoptUndoLeavesAFileChangedSince: a client that rewrote its file
// after adopt (Claude Code keeps counters in ~/.claude.json) keeps its
// change: --undo names the file and its backup and restores the others.
func TestAdoptUndoLeavesAFileChangedSince(t *testing.T) {
	home, _ := adoptHome(t)
	os.RemoveAll(filepath.Join(home, "src"))
	before := snapshot(t, home)
	if out, code := runAdopt(t, home, "adopt", "--write"); code != 0 {
		t.Fatalf("--write exit %d:\n%s", code, out)
	}
	claude := filepath.Join(home, ".claude.json")
	b, _ := os.ReadFile(claude)
	edited := strings.Replace(string(b), `"numStartups": 41`, `"numStartups": 42`, 1)
	os.WriteFile(claude, []byte(edited), 0o600)

	out, code := runAdopt(t, home, "adopt", "--undo")
	if code != 1 || !strings.Contains(out, "Left ~/.claude.json as it is: it changed since adopt wrote it.") || strings.Count(out, "Restored ") != 4 {
		t.Fatalf("--undo exit %d:\n%s", code, out)
	}
	after := snapshot(t, home)
	if after[".claude.json"] != edited {
		t.Fatal("the changed file was touched")
	}
	// A file removed since is not recreated either.
	cursor := filepath.Join(home, ".cursor", "mcp.json")
	runAdopt(t, home, "adopt", "--write")
	os.Remove(cursor)
	if out, code := runAdopt(t, home, "adopt", "--undo"); code != 1 || !strings.Contains(out, "Left ~/.cursor/mcp.json as it is: it was removed since adopt wrote it.") {
		t.Fatalf("--undo of a removed file, exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(cursor); err == nil {
		t.Fatal("a removed file was recreated")
	}
	for p, content := range before {
		if p != ".claude.json" && after[p] != content {
			t.Errorf("%s not restored", p)
		}
	}
}

// TestAdoptTwoWritesBackToBackUndoStepByStep: two --writes in a row (in
// the same second, as a rule) leave two backups of ~/.claude.json with names
// of their own, and each --undo restores the one made by the write that left
// the file as it is: first the text between the writes, then the original.
// (Backups named to the second sorted either way, and --undo restored
// neither.)
func TestAdoptTwoWritesBackToBackUndoStepByStep(t *testing.T) {
	home, _ := adoptHome(t)
	os.RemoveAll(filepath.Join(home, "src"))
	before := snapshot(t, home)
	if out, code := runAdopt(t, home, "adopt", "--write", "--only", "memory"); code != 0 {
		t.Fatalf("first --write exit %d:\n%s", code, out)
	}
	between := snapshot(t, home)[".claude.json"]
	if out, code := runAdopt(t, home, "adopt", "--write"); code != 0 || !strings.Contains(out, "Wrote ~/.claude.json") {
		t.Fatalf("second --write exit %d:\n%s", code, out)
	}
	backups := 0
	for p := range snapshot(t, home) {
		if strings.HasPrefix(p, ".claude.json.hearth-backup-") {
			backups++
		}
	}
	if backups != 2 {
		t.Fatalf("%d backups of ~/.claude.json, want 2", backups)
	}
	out, code := runAdopt(t, home, "adopt", "--undo")
	if code != 0 || !strings.Contains(out, "Restored ~/.claude.json from ") {
		t.Fatalf("first --undo exit %d:\n%s", code, out)
	}
	if got := snapshot(t, home)[".claude.json"]; got != between {
		t.Fatalf("the first --undo did not restore ~/.claude.json as it was between the writes:\n%s", got)
	}
	if out, code = runAdopt(t, home, "adopt", "--undo"); code != 0 || strings.Count(out, "Restored ") != 1 {
		t.Fatalf("second --undo exit %d:\n%s", code, out)
	}
	sameFiles(t, "after two --undos", snapshot(t, home), before)
}

func TestAdoptBadArguments(t *testing.T) {
	home, _ := adoptHome(t)
	before := snapshot(t, home)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"adopt", "--only", "memroy"}, "no server is named memroy"},
		{[]string{"adopt", "--share", "sometimes"}, "the mode is one of global, directory, client"},
		{[]string{"adopt", "--share", "nosuch=client"}, "no server is named nosuch"},
		{[]string{"adopt", "--write", "--undo"}, "do not go together"},
		{[]string{"adopt", "--undo", "--only", "memory"}, "--undo restores whole files"},
		{[]string{"adopt", "extra"}, `unexpected argument "extra"`},
	} {
		cmd := exec.Command(bin.hearthd, tc.args...)
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "CLAUDE_CONFIG_DIR=")
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%v: %v\n%s", tc.args, err, out)
		}
	}
	sameFiles(t, "after bad arguments", snapshot(t, home), before)
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }

// TestAdoptNotesAShimNotOnPath: an entry naming "hearth" that the user's
// own PATH cannot find would fail in every client; the dry run says so.
func TestAdoptNotesAShimNotOnPath(t *testing.T) {
	home, _ := adoptHome(t)
	for _, tc := range []struct {
		path string
		note bool
	}{{bin.dir, false}, {filepath.Join(home, "nothing-here"), true}} {
		cmd := exec.Command(bin.hearthd, "adopt")
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "CLAUDE_CONFIG_DIR=", "PATH="+tc.path)
		out, _ := cmd.Output()
		if got := strings.Contains(string(out), `Note: "hearth" is not on your PATH`); got != tc.note {
			t.Errorf("PATH=%s: note %v, want %v:\n%s", tc.path, got, tc.note, out)
		}
	}
}
