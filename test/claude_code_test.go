//go:build unix

package test

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// needClaude is the Claude Code CLI test/ts pins (npm ci there), checked
// to run: its postinstall puts the native binary in place of a stub.
// (node_modules/.bin/claude may be either CLI test/ts installs.)
func needClaude(t *testing.T) string {
	t.Helper()
	return claudeCLIs(t)[0].path
}

// claudeEnv is the environment of a Claude Code user whose HOME is home:
// hearth and node on PATH, no variable of the test's own Claude Code or
// hearth, and nothing that would make `claude mcp list` reach the network.
func claudeEnv(home, runtime string) []string {
	node, _ := exec.LookPath("node")
	var env []string
	for _, kv := range cleanEnv(home) {
		name, _, _ := strings.Cut(kv, "=")
		if name == "PATH" || strings.HasPrefix(name, "CLAUDE") || strings.HasPrefix(name, "ANTHROPIC_") || name == "AI_AGENT" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "XDG_RUNTIME_DIR="+runtime,
		"PATH="+bin.dir+":"+filepath.Dir(node)+":/usr/bin:/bin",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
}

// claudeMCPList runs `claude mcp list` in dir and returns, per server
// name, the status it printed ("✔ Connected", "✗ Failed to connect", ...).
func claudeMCPList(t *testing.T, claude, dir string, env []string) (map[string]string, string) {
	cmd := exec.Command(claude, "mcp", "list")
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, out.String() + "\n" + err.Error()
	}
	// One line per server: "NAME: COMMAND ARGS - STATUS".
	got := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		name, rest, ok := strings.Cut(line, ": ")
		if i := strings.LastIndex(rest, " - "); ok && i >= 0 && !strings.Contains(name, " ") {
			got[name] = rest[i+3:]
		}
	}
	return got, out.String()
}

// claudeHome is a Claude Code user whose ~/.claude.json lists
// server-everything, server-memory and server-filesystem, moved behind
// hearth by `hearthd adopt --write`.
type claudeHome struct {
	claude, home, runtime, project string
	env                            []string
	scripts                        map[string]string // entry name: the server's script
}

func adoptClaudeHome(t *testing.T, claude string) claudeHome {
	t.Helper()
	everything := npmServer(t, "server-everything")
	memory := npmServer(t, "server-memory")
	filesystem := npmServer(t, "server-filesystem")

	home := shortTempDir(t)
	runtime := shortTempDir(t)
	project := filepath.Join(home, "src", "app")
	shared := filepath.Join(home, "shared")
	for _, d := range []string{project, shared} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		stopOwner(t, filepath.Join(home, ".local", "share", "hearth"))
		killDaemonsIn(runtime)
		killDaemonsOfHome(home)
	})
	type entry struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env,omitempty"`
	}
	servers := map[string]entry{
		"everything": {"stdio", "node", []string{everything}, nil},
		"memory":     {"stdio", "node", []string{memory}, map[string]string{"MEMORY_FILE_PATH": filepath.Join(home, "memory.jsonl")}},
		"files":      {"stdio", "node", []string{filesystem, shared}, nil},
	}
	cfg, _ := json.MarshalIndent(map[string]any{"numStartups": 3, "mcpServers": servers}, "", "  ")
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}

	out, code := runAdopt(t, home, "adopt", "--write")
	if code != 0 || !strings.Contains(out, "Wrote ") {
		t.Fatalf("adopt --write exit %d:\n%s", code, out)
	}
	scripts := map[string]string{"everything": everything, "memory": memory, "files": filesystem}
	for name := range servers {
		if e := readEntry(t, filepath.Join(home, ".claude.json"), "mcpServers", name); e.Command != "hearth" {
			t.Fatalf("%s was not moved behind hearth: %+v", name, e)
		}
	}
	return claudeHome{claude, home, runtime, project, claudeEnv(home, runtime), scripts}
}

// TestClaudeCodeSharesAdoptedServers: a ~/.claude.json with three stdio
// servers (server-everything; server-memory with its MEMORY_FILE_PATH in
// the entry's env; server-filesystem on a directory), moved behind hearth
// by `hearthd adopt --write`, then `claude mcp list` three at once and
// three more one after another, from one project directory, with the CLI
// test/ts pins and with the newest. Claude Code starts each server of each
// run with variables of its own session (CLAUDE_CODE_SESSION_ID, and
// CLAUDE_CODE_CHILD_NOTES_DIR and more in 2.1.332), and the newest probes
// with server/discover first: every server answers in every run, and
// hearth hosts exactly one instance per entry, not one per session
// (decisions 0042, 0056 and 0057), named by the entry's name.
func TestClaudeCodeSharesAdoptedServers(t *testing.T) {
	for _, cli := range claudeCLIs(t) {
		t.Run(cli.version, func(t *testing.T) { claudeCodeSharesAdoptedServers(t, cli.path) })
	}
}

func claudeCodeSharesAdoptedServers(t *testing.T, claudePath string) {
	a := adoptClaudeHome(t, claudePath)
	claude, project, servers, env := a.claude, a.project, a.scripts, a.env
	check := func(run string, got map[string]string, raw string) {
		t.Helper()
		for name := range servers {
			if got[name] != "✔ Connected" {
				t.Errorf("%s: %s is %q\n%s", run, name, got[name], raw)
			}
		}
	}
	var wg sync.WaitGroup
	type result struct {
		got map[string]string
		raw string
	}
	at := make([]result, 3)
	for i := range at {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at[i].got, at[i].raw = claudeMCPList(t, claude, project, env)
		}()
	}
	wg.Wait()
	t.Logf("claude mcp list:\n%s", at[0].raw)
	for i, r := range at {
		check("run "+string(rune('1'+i))+" of three at once", r.got, r.raw)
	}
	for i := range 3 {
		got, raw := claudeMCPList(t, claude, project, env)
		check("run "+string(rune('1'+i))+" of three in turn", got, raw)
	}

	// One instance per entry: the sessions' variables named none.
	status, code := runHearthdCmd(t, env, "status", "--json")
	var st struct {
		Hosted []struct {
			Server, Name, Key, State string
			EnvNames                 []string
		}
	}
	if err := json.Unmarshal([]byte(status), &st); code != 0 || err != nil {
		t.Fatalf("hearthd status --json exit %d: %v\n%s", code, err, status)
	}
	names := map[string]bool{}
	for _, h := range st.Hosted {
		t.Logf("hosted: %s %s (%s, env %v)", h.Name, h.Server, h.State, h.EnvNames)
		names[h.Name] = true
	}
	for name := range servers {
		if !names[name] {
			t.Errorf("no instance is named %s, the entry's name", name)
		}
	}
	if len(st.Hosted) != len(servers) {
		t.Errorf("%d hosted instances, want one per entry (%d):", len(st.Hosted), len(servers))
		for _, h := range st.Hosted {
			t.Errorf("  %s %s %s env %v", h.Server, h.Key, h.State, h.EnvNames)
		}
	}
}

// TestClaudeCodeListsCataloguedServersWithoutStarting: after one
// `claude mcp list` of the three adopted servers, `hearthd stop`; the next
// `claude mcp list` (its shims autostart a new daemon) finds all three
// connected, answered from the catalog, and no server process is started
// for it, neither while it runs nor after (decision 0045).
func TestClaudeCodeListsCataloguedServersWithoutStarting(t *testing.T) {
	clis := claudeCLIs(t)
	a := adoptClaudeHome(t, clis[len(clis)-1].path) // the newest: it probes first
	check := func(run string, got map[string]string, raw string) {
		t.Helper()
		for name := range a.scripts {
			if got[name] != "✔ Connected" {
				t.Errorf("%s: %s is %q\n%s", run, name, got[name], raw)
			}
		}
	}
	running := func() map[int]string {
		pids := map[int]string{}
		for name, script := range a.scripts {
			for _, pid := range upstreamsRunning(script, a.home) {
				pids[pid] = name
			}
		}
		return pids
	}
	got, raw := claudeMCPList(t, a.claude, a.project, a.env)
	check("first run", got, raw)
	if len(running()) != len(a.scripts) {
		t.Fatalf("the first run left %v running, want one upstream per entry", running())
	}
	waitCatalogued(t, a.env, len(a.scripts))
	stopDaemon(t, a.env)
	for deadline := time.Now().Add(20 * time.Second); len(running()) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("servers still run after hearthd stop: %v", running())
		}
	}

	// Every server process seen while the second run goes on, and after.
	seen := map[int]string{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		got, raw = claudeMCPList(t, a.claude, a.project, a.env)
	}()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-time.After(10 * time.Millisecond):
		}
		maps.Copy(seen, running())
	}
	t.Logf("claude mcp list after the restart:\n%s", raw)
	check("after the restart", got, raw)
	if len(seen) > 0 {
		t.Errorf("server processes started for claude mcp list after the restart (pid: entry): %v", seen)
	}
	status, _ := runHearthdCmd(t, a.env, "status")
	t.Logf("hearthd status:\n%s", status)
}

// TestClaudeCodeAddsHearthOverStdioAndHTTP follows the README with the
// real Claude Code CLI: `claude mcp add -s user hearth -- hearth`, then the
// HTTP line `hearthd status` prints; Claude Code accepts both (the HTTP
// entry has a name of its own, not the stdio entry's) and `claude mcp list`
// finds both connected.
func TestClaudeCodeAddsHearthOverStdioAndHTTP(t *testing.T) {
	claude := needClaude(t)
	d := startHTTPDaemon(t)
	home := shortTempDir(t)
	var runtime, data string
	for _, kv := range d.cmd.Env {
		if v, ok := strings.CutPrefix(kv, "XDG_RUNTIME_DIR="); ok {
			runtime = v
		}
		if v, ok := strings.CutPrefix(kv, "HEARTH_HOME="); ok {
			data = v
		}
	}
	env := claudeEnv(home, runtime)
	// As for a user who installed it: `claude` on the PATH (the package's
	// binary is bin/claude.exe).
	onPath := shortTempDir(t)
	if err := os.Symlink(claude, filepath.Join(onPath, "claude")); err != nil {
		t.Fatal(err)
	}
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + onPath + ":" + v
		}
	}
	env = append(env, "HEARTH_HOME="+data)

	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = home, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("bash", "-c", "claude mcp add -s user hearth -- hearth") // the README's line
	status := run(bin.hearthd, "status")
	var httpLine string
	for _, l := range strings.Split(status, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "claude mcp add ") {
			httpLine = l
		}
	}
	if httpLine == "" {
		t.Fatalf("hearthd status prints no claude mcp add line for HTTP:\n%s", status)
	}
	run("bash", "-c", httpLine)
	got, raw := claudeMCPList(t, claude, home, env)
	t.Logf("claude mcp list:\n%s", raw)
	if len(got) != 2 {
		t.Errorf("%d servers listed, want hearth over stdio and over HTTP", len(got))
	}
	for name, state := range got {
		if state != "✔ Connected" {
			t.Errorf("%s is %q", name, state)
		}
	}
}
