package adopt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonc"
)

const vscodeUser = `// VS Code: MCP servers for every workspace
{
	"inputs": [
		{"type": "promptString", "id": "gh-token", "description": "GitHub token", "password": true}
	],
	"servers": {
		// the memory graph
		"memory": {
			"type": "stdio",
			"command": "npx",
			"args": [
				"-y",
				"@modelcontextprotocol/server-memory"
			],
			"env": {"MEMORY_FILE_PATH": "${env:HOME}/memory.jsonl", "TOKEN": "${input:gh-token}"},
		},
		"remote": {"type": "http", "url": "https://example.com/mcp"},
		"shell": {"command": "${env:HOME}/bin/tool"}, /* no args at all */
	},
}
`

const claudeJSON = `{
  "numStartups": 12,
  "mcpServers": {
    "fs": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
      "env": {}
    },
    "hearth": {"command": "hearth", "args": []},
    "ctx": {"type": "sse", "url": "http://localhost:9000/sse"}
  },
  "projects": {
    "/home/u/app": {
      "allowedTools": [],
      "mcpServers": {
        "db": {"command": "uvx", "args": [], "cwd": "/home/u/app", "env": {"DB": "x"}},
        "odd": {"command": 5}
      }
    }
  }
}
`

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func load(t *testing.T, loc Location) *File {
	t.Helper()
	f, err := Load(loc)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func decisions(p *Plan) map[string]Action {
	m := map[string]Action{}
	for _, d := range p.Decisions {
		m[d.Name] = d.Action
	}
	return m
}

func TestVSCodePlanKeepsCommentsAndInputs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	writeFile(t, path, vscodeUser)
	f := load(t, Location{Client: VSCode, Path: path, Key: "servers", Syntax: jsonc.JSONC})
	p, err := f.Plan(Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Action{"memory": Move, "remote": Move, "shell": Move}
	if got := decisions(p); !mapsEqual(got, want) {
		t.Fatalf("decisions %v, want %v", got, want)
	}
	wantText := strings.NewReplacer(
		`"command": "npx",
			"args": [
				"-y",`, `"command": "hearth",
			"args": [
				"run",
				"--name",
				"memory",
				"--env",
				"MEMORY_FILE_PATH,TOKEN",
				"--",
				"npx",
				"-y",`,
		`"shell": {"command": "${env:HOME}/bin/tool"}`, `"shell": {"command": "hearth", "args": ["run", "--name", "shell", "--env=", "--", "${env:HOME}/bin/tool"]}`,
		`"remote": {"type": "http", "url": "https://example.com/mcp"}`, `"remote": {"type": "stdio", "command": "hearth", "args": ["run", "--name=remote", "--url", "https://example.com/mcp"]}`,
	).Replace(vscodeUser)
	if string(p.New) != wantText {
		t.Fatalf("new text:\n%s\nwant:\n%s", p.New, wantText)
	}
	// The result is still JSONC the client reads, with the same servers.
	again := load(t, Location{Client: VSCode, Path: write(t, p.New), Key: "servers", Syntax: jsonc.JSONC})
	for _, s := range again.Servers {
		if s.Name == "memory" && !slices.Equal(s.Args, []string{"run", "--name", "memory", "--env", "MEMORY_FILE_PATH,TOKEN", "--", "npx", "-y", "@modelcontextprotocol/server-memory"}) {
			t.Fatalf("memory args %q", s.Args)
		}
		if s.Kind != Hosted {
			t.Fatalf("%s is %v after the rewrite", s.Name, s.Kind)
		}
	}
}

func write(t *testing.T, content []byte) string {
	path := filepath.Join(t.TempDir(), "f.json")
	writeFile(t, path, string(content))
	return path
}

func mapsEqual(a, b map[string]Action) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestClaudeCodeUserAndProjects(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude.json")
	writeFile(t, path, claudeJSON)
	f := load(t, Location{Client: ClaudeCode, Path: path, Key: "mcpServers", Projects: true})
	p, err := f.Plan(Options{Share: map[string]string{"db": "client"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Action{"fs": Move, "hearth": KeepHearth, "ctx": Move, "db": Move, "odd": KeepUnknown}
	if got := decisions(p); !mapsEqual(got, want) {
		t.Fatalf("decisions %v, want %v", got, want)
	}
	for _, d := range p.Decisions {
		if d.Name == "db" && (d.Scope != "/home/u/app" || d.Share != "client") {
			t.Fatalf("db: %+v", d)
		}
	}
	for _, s := range []string{
		`"command": "hearth",
      "args": ["run", "--name", "fs", "--env=", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"],`,
		`"db": {"command": "hearth", "args": ["run", "--share", "client", "--name", "db", "--env", "DB", "--", "uvx"], "cwd": "/home/u/app", "env": {"DB": "x"}}`,
		`"numStartups": 12,`,
		`"ctx": {"type": "stdio", "command": "hearth", "args": ["run", "--name=ctx", "--url", "http://localhost:9000/sse"]}`,
	} {
		if !strings.Contains(string(p.New), s) {
			t.Fatalf("new text lacks %s:\n%s", s, p.New)
		}
	}
	if total, through, movable, remote := f.Count(); total != 5 || through != 1 || movable != 2 || remote != 1 {
		t.Fatalf("Count: %d %d %d %d", total, through, movable, remote)
	}
}

func TestSelectionAndBadShare(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude.json")
	writeFile(t, path, claudeJSON)
	f := load(t, Location{Client: ClaudeCode, Path: path, Key: "mcpServers", Projects: true})
	p, err := f.Plan(Options{Only: []string{"fs", "db"}, Except: []string{"db"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := decisions(p); got["fs"] != Move || got["db"] != NotSelected {
		t.Fatalf("decisions %v", got)
	}
	if _, err := f.Plan(Options{Share: map[string]string{"": "sometimes"}}); err == nil || !strings.Contains(err.Error(), `"sometimes"`) {
		t.Fatalf("bad mode: %v", err)
	}
}

// TestEntryShapes: each way an entry can be laid out gets args that the
// client reads as `run -- COMMAND ARGS...`, and nothing else changes.
func TestEntryShapes(t *testing.T) {
	for _, tc := range []struct{ name, entry, want string }{
		{"no args, one line", `{"command": "x"}`, `{"command": "hearth", "args": ["run", "--name", "s", "--env=", "--", "x"]}`},
		{"no args, env after", "{\n  \"command\": \"x\",\n  \"env\": {}\n}", "{\n  \"command\": \"hearth\",\n  \"args\": [\"run\", \"--name\", \"s\", \"--env=\", \"--\", \"x\"],\n  \"env\": {}\n}"},
		{"no args, command last", "{\n  \"env\": {},\n  \"command\": \"x\"\n}", "{\n  \"env\": {},\n  \"command\": \"hearth\",\n  \"args\": [\"run\", \"--name\", \"s\", \"--env=\", \"--\", \"x\"]\n}"},
		{"null args", `{"command": "x", "args": null}`, `{"command": "hearth", "args": ["run", "--name", "s", "--env=", "--", "x"]}`},
		{"empty args", `{"args": [ ], "command": "x"}`, `{"args": ["run", "--name", "s", "--env=", "--", "x" ], "command": "hearth"}`},
		{"one arg", `{"command": "x", "args": ["a"]}`, `{"command": "hearth", "args": ["run", "--name", "s", "--env=", "--", "x", "a"]}`},
		{"tight args", `{"command":"x","args":["a","b"]}`, `{"command":"hearth","args":["run","--name","s","--env=","--","x","a","b"]}`},
		{"escapes kept", `{"command": "C:\\tools\\x.exe", "args": ["\u0041"]}`, `{"command": "hearth", "args": ["run", "--name", "s", "--env=", "--", "C:\\tools\\x.exe", "\u0041"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `{"mcpServers": {"s": ` + tc.entry + `}}`
			f := load(t, Location{Path: write(t, []byte(src)), Key: "mcpServers"})
			p, err := f.Plan(Options{})
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"mcpServers": {"s": ` + tc.want + `}}`; string(p.New) != want {
				t.Fatalf("got  %s\nwant %s", p.New, want)
			}
			again := load(t, Location{Path: write(t, p.New), Key: "mcpServers"})
			if again.Err != nil || again.Servers[0].Kind != Hosted || again.Servers[0].Args[5] != f.Servers[0].Command {
				t.Fatalf("rewritten entry reads as %+v (%v)", again.Servers[0], again.Err)
			}
		})
	}
}

// An entry hearth cannot move is left alone, and the plan says why in the
// words of what is wrong with it.
func TestUnusableEntriesSayWhy(t *testing.T) {
	for _, tc := range []struct{ entry, why string }{
		{`"npx"`, "the entry is a string, not an object"},
		{`{}`, "no command"},
		{`{"command": null}`, "no command"},
		{`{"command": 42}`, "its command is a number, not a string"},
		{`{"command": ["npx"]}`, "its command is an array, not a string"},
		{`{"command": ""}`, "its command is empty"},
		{`{"command": "x", "args": "a b"}`, "its args is a string, not a list"},
		{`{"command": "x", "args": ["a", 1]}`, "its args holds a number, not only strings"},
	} {
		src := `{"mcpServers": {"s": ` + tc.entry + `}}`
		f := load(t, Location{Path: write(t, []byte(src)), Key: "mcpServers"})
		if f.Err != nil || len(f.Servers) != 1 {
			t.Fatalf("%s: %v, %d servers", tc.entry, f.Err, len(f.Servers))
		}
		if s := f.Servers[0]; s.Kind != Unusable || s.Why != tc.why {
			t.Errorf("%s: kind %v, why %q; want %q", tc.entry, s.Kind, s.Why, tc.why)
		}
		p, err := f.Plan(Options{})
		if err != nil || string(p.New) != src {
			t.Errorf("%s: the plan changed the file (%v): %s", tc.entry, err, p.New)
		}
	}
}

func TestBrokenFilesAreRefused(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"syntax", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}", "line 3, column 25: a comma after the last member"},
		{"comment in JSON", "// c\n{}", "comments are not allowed"},
		{"servers not an object", `{"mcpServers": []}`, "not an object of servers"},
		{"top level array", `[]`, "top level is an array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, []byte(tc.src))
			f := load(t, Location{Path: path, Key: "mcpServers"})
			if f.Err == nil || !strings.Contains(f.Err.Error(), tc.want) {
				t.Fatalf("Err = %v, want %q", f.Err, tc.want)
			}
			p, _ := f.Plan(Options{})
			if p.Changed() {
				t.Fatal("a refused file has changes planned")
			}
			if _, err := Write(p, time.Now()); err == nil {
				t.Fatal("Write of a refused file: want an error")
			}
			if b, _ := os.ReadFile(path); string(b) != tc.src {
				t.Fatal("the refused file changed")
			}
		})
	}
	if _, err := Load(Location{Path: filepath.Join(t.TempDir(), "none")}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	f := load(t, Location{Path: write(t, []byte("  \n")), Key: "servers", Syntax: jsonc.JSONC})
	if f.Err != nil || len(f.Servers) != 0 {
		t.Fatalf("an empty file: %+v", f)
	}
}

func TestWriteTwiceThenUndo(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	writeFile(t, path, vscodeUser)
	loc := Location{Client: VSCode, Path: path, Key: "servers", Syntax: jsonc.JSONC}
	now := time.Date(2026, 11, 25, 23, 30, 0, 0, time.UTC)

	p, _ := load(t, loc).Plan(Options{Only: []string{"memory"}})
	backup, err := Write(p, now)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(backup); string(b) != vscodeUser {
		t.Fatal("the backup is not the original")
	}
	if fi, _ := os.Stat(backup); fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup mode %v, want the file's 0600", fi.Mode())
	}
	first, _ := os.ReadFile(path)
	// The same selection again changes nothing and backs nothing up.
	p, _ = load(t, loc).Plan(Options{Only: []string{"memory"}})
	if p.Changed() {
		t.Fatalf("second plan changes:\n%s", p.Diff("f"))
	}
	if b, err := Write(p, now.Add(time.Second)); err != nil || b != "" {
		t.Fatalf("second write: %q %v", b, err)
	}
	// A wider selection is a second write, with its own backup.
	p, _ = load(t, loc).Plan(Options{})
	if _, err := Write(p, now.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	if bs, _ := Backups(path); len(bs) != 2 {
		t.Fatalf("backups: %v", bs)
	}
	// Each undo steps back one write.
	if r, _, err := Undo(path); r != Restored || err != nil {
		t.Fatalf("undo 1: %v %v", r, err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(first) {
		t.Fatal("undo 1 did not restore the first write's text")
	}
	if r, _, err := Undo(path); r != Restored || err != nil {
		t.Fatalf("undo 2: %v %v", r, err)
	}
	if b, _ := os.ReadFile(path); string(b) != vscodeUser {
		t.Fatal("undo 2 did not restore the original")
	}
	if r, _, _ := Undo(path); r != NoBackup {
		t.Fatalf("undo 3: %v", r)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

func TestUndoLeavesAChangedFile(t *testing.T) {
	path := write(t, []byte(claudeJSON))
	loc := Location{Path: path, Key: "mcpServers", Projects: true}
	p, _ := load(t, loc).Plan(Options{})
	backup, err := Write(p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(p.New), `"numStartups": 12`, `"numStartups": 13`, 1)
	writeFile(t, path, edited)
	r, b, err := Undo(path)
	if r != Changed || err != nil || b.Path != backup {
		t.Fatalf("undo: %v %+v %v", r, b, err)
	}
	if got, _ := os.ReadFile(path); string(got) != edited {
		t.Fatal("a changed file was touched")
	}
	if _, err := os.Stat(backup); err != nil {
		t.Fatal("the backup of a changed file was removed")
	}
}

// TestWriteFollowsSymlink: a config kept in a dotfiles repository and
// linked into place stays a link; the file it names is rewritten and
// backed up beside itself.
func TestWriteFollowsSymlink(t *testing.T) {
	dots := t.TempDir()
	real := filepath.Join(dots, "claude.json")
	writeFile(t, real, claudeJSON)
	link := filepath.Join(t.TempDir(), ".claude.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	p, _ := load(t, Location{Path: link, Key: "mcpServers"}).Plan(Options{})
	backup, err := Write(p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced by a file")
	}
	if filepath.Dir(backup) != dots {
		t.Fatalf("backup %s is not beside the real file", backup)
	}
	if r, _, _ := Undo(link); r != Restored {
		t.Fatalf("undo through the link: %v", r)
	}
	if b, _ := os.ReadFile(real); string(b) != claudeJSON {
		t.Fatal("not restored")
	}
}

func TestWriteRefusesAFileChangedSinceRead(t *testing.T) {
	path := write(t, []byte(claudeJSON))
	p, _ := load(t, Location{Path: path, Key: "mcpServers"}).Plan(Options{})
	writeFile(t, path, claudeJSON+" ")
	if _, err := Write(p, time.Now()); !errors.Is(err, ErrChanged) {
		t.Fatalf("want ErrChanged, got %v", err)
	}
	if bs, _ := Backups(path); len(bs) != 0 {
		t.Fatal("a backup was made")
	}
}

func TestLocations(t *testing.T) {
	env := Env{Home: "/h", Getenv: func(k string) string {
		return map[string]string{"XDG_CONFIG_HOME": "/cfg"}[k]
	}}
	var paths []string
	for _, l := range LocationsOn("linux", env, []string{"/p", "/p"}) {
		paths = append(paths, l.Client+" "+l.Path)
	}
	for _, want := range []string{
		"Claude Code /h/.claude.json",
		"Claude Desktop /cfg/Claude/claude_desktop_config.json",
		"Claude Desktop /h/Library/Application Support/Claude/claude_desktop_config.json",
		"Cursor /h/.cursor/mcp.json",
		"VS Code /cfg/Code/User/mcp.json",
		"VS Code /h/Library/Application Support/Code/User/mcp.json",
		"Claude Code /p/.mcp.json",
		"Cursor /p/.cursor/mcp.json",
		"VS Code /p/.vscode/mcp.json",
	} {
		if !slices.Contains(paths, want) {
			t.Errorf("missing %s in %v", want, paths)
		}
	}
	if len(paths) != 11 {
		t.Errorf("%d locations (a project given twice is listed once): %v", len(paths), paths)
	}
}

// Windows's places, decided from the environment alone and joined with
// its separator, checked on any system.
func TestLocationsOnWindows(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"APPDATA", map[string]string{"APPDATA": `C:\Users\me\AppData\Roaming`}, []string{
			`Claude Code C:\Users\me\.claude.json`,
			`Claude Desktop C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json`,
			`Cursor C:\Users\me\.cursor\mcp.json`,
			`VS Code C:\Users\me\AppData\Roaming\Code\User\mcp.json`,
			`VS Code Insiders C:\Users\me\AppData\Roaming\Code - Insiders\User\mcp.json`,
			`Claude Code D:\proj\.mcp.json`,
			`Cursor D:\proj\.cursor\mcp.json`,
			`VS Code D:\proj\.vscode\mcp.json`,
		}},
		{"no APPDATA: the profile's", map[string]string{"XDG_CONFIG_HOME": "/cfg"}, []string{
			`Claude Code C:\Users\me\.claude.json`,
			`Claude Desktop C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json`,
			`Cursor C:\Users\me\.cursor\mcp.json`,
			`VS Code C:\Users\me\AppData\Roaming\Code\User\mcp.json`,
			`VS Code Insiders C:\Users\me\AppData\Roaming\Code - Insiders\User\mcp.json`,
			`Claude Code D:\proj\.mcp.json`,
			`Cursor D:\proj\.cursor\mcp.json`,
			`VS Code D:\proj\.vscode\mcp.json`,
		}},
		{"a relative APPDATA and CLAUDE_CONFIG_DIR", map[string]string{"APPDATA": `AppData`, "CLAUDE_CONFIG_DIR": `E:\claude\`}, []string{
			`Claude Code E:\claude\.claude.json`,
			`Claude Desktop C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json`,
			`Cursor C:\Users\me\.cursor\mcp.json`,
			`VS Code C:\Users\me\AppData\Roaming\Code\User\mcp.json`,
			`VS Code Insiders C:\Users\me\AppData\Roaming\Code - Insiders\User\mcp.json`,
			`Claude Code D:\proj\.mcp.json`,
			`Cursor D:\proj\.cursor\mcp.json`,
			`VS Code D:\proj\.vscode\mcp.json`,
		}},
	} {
		env := Env{Home: `C:\Users\me`, Getenv: func(k string) string { return c.env[k] }}
		var got []string
		for _, l := range LocationsOn("windows", env, []string{`D:\proj`, `D:\proj`}) {
			got = append(got, l.Client+" "+l.Path)
			if (l.Key == "servers") != strings.HasPrefix(l.Client, VSCode) {
				t.Errorf("%s: %s reads %q", c.name, l.Path, l.Key)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\ngot  %q\nwant %q", c.name, got, c.want)
		}
	}
	// Unix's places are never Windows's, nor Windows's Unix's.
	for _, l := range LocationsOn("linux", Env{Home: "/h", Getenv: func(k string) string { return map[string]string{"APPDATA": `C:\A`}[k] }}, nil) {
		if strings.Contains(l.Path, `\`) {
			t.Errorf("linux: %s", l.Path)
		}
	}
}

func TestStatefulServersArePointedOut(t *testing.T) {
	src := `{"mcpServers": {"pw": {"command": "npx", "args": ["@playwright/mcp@latest"]}, "mem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}`
	f := load(t, Location{Path: write(t, []byte(src)), Key: "mcpServers"})
	p, _ := f.Plan(Options{})
	if got := p.Decisions[0].Describe(); got != "moves behind hearth; it drives a browser: consider --share pw=client" {
		t.Fatalf("pw: %q", got)
	}
	if got := p.Decisions[1].Describe(); got != "moves behind hearth" {
		t.Fatalf("mem: %q", got)
	}
	p, _ = f.Plan(Options{Share: map[string]string{"pw": "client"}})
	if got := p.Decisions[0].Describe(); got != "moves behind hearth (sharing: client)" {
		t.Fatalf("pw with its mode: %q", got)
	}
}

// TestOwnShimIsNotWrappedTwice: entries an earlier run wrote with a shim
// command not named hearth are recognised as moved by a run with the same
// command, not wrapped again.
func TestOwnShimIsNotWrappedTwice(t *testing.T) {
	path := write(t, []byte(`{"mcpServers": {"a": {"command": "npx", "args": ["x"]}}}`))
	opt := Options{Shim: "/opt/bin/mcp-shim"}
	p, _ := load(t, Location{Path: path, Key: "mcpServers"}).Plan(opt)
	if _, err := Write(p, time.Now()); err != nil {
		t.Fatal(err)
	}
	p, _ = load(t, Location{Path: path, Key: "mcpServers"}).Plan(opt)
	if p.Changed() || p.Decisions[0].Action != KeepHosted {
		t.Fatalf("second run: %v\n%s", p.Decisions[0].Action, p.New)
	}
}

// BenchmarkPlanLargeClaudeJSON: a ~/.claude.json of about 8 MB (Claude Code
// keeps every project's history in it) with two servers to move: reading,
// planning, and the diff.
func BenchmarkPlanLargeClaudeJSON(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("{\n  \"mcpServers\": {\"a\": {\"command\": \"npx\", \"args\": [\"x\"]}},\n  \"projects\": {\n")
	for i := 0; i < 4000; i++ {
		fmt.Fprintf(&sb, "    \"/home/u/p%d\": {\"history\": [", i)
		for j := 0; j < 20; j++ {
			fmt.Fprintf(&sb, "{\"display\": \"a prompt of some length, number %d, with \\\"quotes\\\" and more words\"},\n", j)
		}
		sb.WriteString("{}], \"mcpServers\": {}},\n")
	}
	sb.WriteString("    \"/home/u/last\": {\"mcpServers\": {\"b\": {\"command\": \"uvx\", \"args\": [\"y\"]}}}\n  }\n}\n")
	path := filepath.Join(b.TempDir(), ".claude.json")
	if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(sb.Len()))
	for b.Loop() {
		f, err := Load(Location{Path: path, Key: "mcpServers", Projects: true})
		if err != nil || f.Err != nil {
			b.Fatal(err, f.Err)
		}
		p, err := f.Plan(Options{})
		if err != nil || len(p.Edits) != 4 {
			b.Fatal(err, len(p.Edits))
		}
		if p.Diff("f") == "" {
			b.Fatal("no diff")
		}
	}
}
