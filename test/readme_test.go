//go:build unix

package test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-mcp/hearth/pkg/config"
)

// readmeStep is what the README test does with one command line of the
// README's sh blocks, in the README's order.
type readmeStep struct {
	cmd  string // the command, without its trailing comment
	code int    // the exit code a new user sees
	out  string // what its output shows
	// background: a command that serves until stopped; the script goes on
	// once `hearthd status` answers.
	background bool
	// skip says why the command is not run here, and what checks it instead.
	skip string
}

// readmeSteps are the sh commands of readmeFiles, file after file, top to
// bottom. A change to their commands must change this list: the test fails
// on any command it does not know, so no command reaches the README or a
// doc unchecked.
var readmeSteps = []readmeStep{
	{cmd: "go install ./daemon/hearthd ./shim/hearth"},
	{cmd: `export PATH="$(go env GOPATH)/bin:$PATH"`},
	{cmd: "hearthd version", out: "hearthd "},
	{cmd: "hearthd status", code: 1, out: "no hearth daemon serves"},
	{cmd: "hearthd serve", background: true},
	{cmd: "hearthd status", out: "clients ("},
	{cmd: "claude mcp add -s user hearth -- hearth", skip: "Claude Code is not on a new user's PATH here; the test connects a client through `hearth` from the JSON configs instead, and test/claude_code_test.go runs this line with test/ts's Claude Code"},
	{cmd: "claude mcp add -s user everything -- hearth run --name everything --env= -- npx -y @modelcontextprotocol/server-everything", skip: "Claude Code is not on a new user's PATH here and npx would fetch the server; test/claude_code_test.go runs Claude Code on entries of this form (as hearthd adopt writes them) with the servers from test/ts"},
	{cmd: "claude mcp add -s user memory -e MEMORY_FILE_PATH=/home/me/notes/memory.jsonl -- hearth run --name memory --env MEMORY_FILE_PATH -- npx -y @modelcontextprotocol/server-memory", skip: "as the line above; test/claude_code_test.go's server-memory entry sets MEMORY_FILE_PATH the same way"},
	{cmd: "npx @modelcontextprotocol/inspector --cli hearth run npx -y @modelcontextprotocol/server-everything --method tools/list", skip: "npx would fetch the Inspector and the server; test/hosted_npm_test.go runs the Inspector CLI from test/ts on hearth run and server-everything"},
	{cmd: "sudo apt-get install postgresql", skip: "installing PostgreSQL needs root; test/postgres_test.go runs the store and hearthd migrate on a real server"},
	{cmd: `sudo -u postgres createuser "$USER"`, skip: "needs root and a PostgreSQL cluster"},
	{cmd: `sudo -u postgres createdb -O "$USER" hearth`, skip: "needs root and a PostgreSQL cluster"},
	{cmd: `echo 'store_url = "host=/run/postgresql dbname=hearth"' >> ~/.config/hearth/config.toml`, skip: "the line is checked to parse as a setting below; the store it names needs a PostgreSQL cluster"},
	{cmd: "hearthd migrate", skip: "needs the PostgreSQL cluster above; test/postgres_test.go runs it"},
}

// readmeFiles are the README and the guides it links to, in the order a
// reader follows them: their commands are readmeSteps in this order, and
// their config examples are checked as the README's own.
// TestREADMEFilesCoverTheGuides keeps every guide with a command or a config
// example in this list.
var readmeFiles = []string{"README.md", "docs/hosting.md", "docs/http.md", "docs/platforms.md", "docs/status.md",
	"docs/reference.md", "docs/behaviour.md", "docs/tools.md", "docs/development.md"}

// readmeBlock is one fenced block of readmeFiles.
type readmeBlock struct{ lang, text string }

func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	var out []readmeBlock
	for _, f := range readmeFiles {
		raw, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```").FindAllStringSubmatch(string(raw), -1) {
			out = append(out, readmeBlock{m[1], m[2]})
		}
	}
	return out
}

// readmeCommand is a sh line without its trailing comment ("  # ...").
func readmeCommand(line string) string {
	if i := strings.Index(line, "  #"); i >= 0 {
		line = line[:i]
	}
	return strings.TrimSpace(line)
}

// TestREADMETopToBottom follows the README (and the docs of readmeFiles) as
// a new user does, in a fresh home directory: it installs the binaries with
// go install, runs every command of their sh blocks in order (those it cannot run here are listed
// with the reason and what checks them instead), pastes its config example
// into a fresh config file, and connects an MCP client the way the client
// configs say, through `hearth` found on the PATH: validate_asset works
// and the settings in force are the example's.
func TestREADMETopToBottom(t *testing.T) {
	if testing.Short() {
		t.Skip("go install of both binaries: not in -short")
	}
	gobin, err := exec.LookPath("go")
	needOrSkip(t, err == nil, "the go command")
	blocks := readmeBlocks(t)

	// The README's commands, in order, are exactly the known steps.
	var lines []string
	for _, b := range blocks {
		if b.lang != "sh" {
			continue
		}
		for _, l := range strings.Split(b.text, "\n") {
			if c := readmeCommand(l); c != "" {
				lines = append(lines, c)
			}
		}
	}
	for i := 0; i < max(len(lines), len(readmeSteps)); i++ {
		switch {
		case i >= len(lines):
			t.Fatalf("the README no longer has %q (step %d): update readmeSteps", readmeSteps[i].cmd, i)
		case i >= len(readmeSteps) || readmeSteps[i].cmd != lines[i]:
			t.Fatalf("README command %d is %q, which readmeSteps does not expect there: add it to readmeSteps in test/readme_test.go, run or skipped with the reason and what checks it instead", i, lines[i])
		}
	}

	// A new user: a home of their own, no hearth variables, Go's caches
	// kept (so go install does not download or rebuild the world).
	sandbox := shortTempDir(t)
	home := filepath.Join(sandbox, "home")
	os.Mkdir(home, 0o700)
	t.Cleanup(func() { killDaemonsOfHome(home) })
	env := cleanEnv(home)
	for _, k := range []string{"GOMODCACHE", "GOCACHE"} {
		v, err := exec.Command(gobin, "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, k+"="+strings.TrimSpace(string(v)))
	}
	env = append(env, "GOPATH="+filepath.Join(sandbox, "go"), "GOBIN=", "XDG_RUNTIME_DIR="+filepath.Join(sandbox, "run"),
		"PATH="+filepath.Dir(gobin)+":"+os.Getenv("PATH"))
	os.Mkdir(filepath.Join(sandbox, "run"), 0o700)

	// One bash script runs the commands in order (so export carries on),
	// printing each one's exit code after a marker.
	var script strings.Builder
	script.WriteString("cd " + strconv.Quote(mustAbs(t, "..")) + "\n")
	for i, s := range readmeSteps {
		if s.skip != "" {
			t.Logf("not run: %s: %s", s.cmd, s.skip)
			continue
		}
		fmt.Fprintf(&script, "echo '@@step %d'\n", i)
		if s.background {
			fmt.Fprintf(&script, "%s >%q 2>&1 &\necho $! >%q\n", s.cmd, filepath.Join(sandbox, "serve.log"), filepath.Join(sandbox, "serve.pid"))
			script.WriteString("for i in $(seq 300); do hearthd status >/dev/null 2>&1 && break; sleep 0.05; done\n")
			fmt.Fprintf(&script, "echo \"@@rc %d 0\"\n", i)
			continue
		}
		fmt.Fprintf(&script, "%s 2>&1\necho \"@@rc %d $?\"\n", s.cmd, i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's commands: %v\n%s", err, out)
	}
	results := parseSteps(string(out))
	for i, s := range readmeSteps {
		if s.skip != "" {
			continue
		}
		r, ok := results[i]
		if !ok || r.code != s.code || !strings.Contains(r.out, s.out) {
			t.Fatalf("README command %q: exit %d (want %d), output lacks %q?\n%s\n(whole run:\n%s)", s.cmd, r.code, s.code, s.out, r.out, out)
		}
	}
	// The daemon the README started stops on SIGTERM, as on Ctrl-C.
	pid, _ := strconv.Atoi(strings.TrimSpace(string(must(os.ReadFile(filepath.Join(sandbox, "serve.pid"))))))
	syscall.Kill(pid, syscall.SIGTERM)
	waitGone(t, pid)

	// Every config example parses as a config file (the PostgreSQL and HTTP
	// ones name servers not here, so they are only parsed); the general
	// one, pasted as is into a fresh config file, is what the daemon runs.
	var example string
	examples := 0
	for _, b := range blocks {
		if b.lang != "toml" || !strings.HasPrefix(b.text, "# ~/.config/hearth/config.toml") {
			continue
		}
		examples++
		f := filepath.Join(sandbox, fmt.Sprintf("example-%d.toml", examples))
		os.WriteFile(f, []byte(b.text), 0o600)
		if _, err := config.Load(func(k string) string { return map[string]string{"HEARTH_CONFIG": f}[k] }); err != nil {
			t.Fatalf("a config example of the README: %v\n%s", err, b.text)
		}
		if example == "" && strings.Contains(b.text, "max_batch") {
			example = b.text
		}
	}
	if example == "" {
		t.Fatal("the README's config example (with max_batch) is gone")
	}
	conf := filepath.Join(home, ".config", "hearth", "config.toml")
	os.MkdirAll(filepath.Dir(conf), 0o700)
	if err := os.WriteFile(conf, []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	// The line the README appends to the config file parses after it.
	appended := filepath.Join(sandbox, "appended.toml")
	os.WriteFile(appended, []byte(example+"store_url = \"host=/run/postgresql dbname=hearth\"\n"), 0o600)
	if _, err := config.Load(func(k string) string { return map[string]string{"HEARTH_CONFIG": appended}[k] }); err != nil {
		t.Fatalf("the config example with the README's store_url line: %v", err)
	}

	// Every client config that starts hearth on stdio runs `hearth`; run it
	// as they do, from the PATH.
	var command string
	configs := 0
	for _, b := range blocks {
		if b.lang != "json" {
			continue
		}
		var cfg map[string]map[string]struct {
			Command *string `json:"command"`
			URL     string  `json:"url"`
		}
		if json.Unmarshal([]byte(b.text), &cfg) != nil {
			continue // a fragment of another server's entry, not a client config
		}
		for _, servers := range cfg {
			entry, ok := servers["hearth"]
			if !ok || (entry.Command == nil && entry.URL != "") {
				continue // another server's config, or hearth over HTTP (its own tests)
			}
			if entry.Command == nil || *entry.Command != "hearth" {
				t.Fatalf("a client config's hearth entry does not run hearth:\n%s", b.text)
			}
			command = *entry.Command
			configs++
		}
	}
	if configs < 3 {
		t.Fatalf("%d client configs run hearth; the README shows Claude Desktop's, Cursor's and VS Code's", configs)
	}
	shim := exec.Command("bash", "-c", `export PATH="$(go env GOPATH)/bin:$PATH"; exec `+command)
	shim.Env = env
	client := mcp.NewClient(&mcp.Implementation{Name: "readme-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: shim}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	shader, err := os.ReadFile(filepath.Join("..", "pkg", "schemas", "synesthetic", "examples", "Shader_Example.json"))
	if err != nil {
		t.Fatal(err)
	}
	var asset map[string]any
	json.Unmarshal(shader, &asset)
	if st := structured(t, callTool(t, cs, "validate_asset", map[string]any{"schema": "shader", "asset": asset})); st["ok"] != true {
		t.Fatalf("validate_asset with the README's config example: %v", st)
	}
	st := structured(t, callTool(t, cs, "daemon_status", map[string]any{}))
	b, _ := json.Marshal(st["settings"])
	var settings struct {
		File     string `json:"file"`
		FileRead bool   `json:"file_read"`
		Keys     []struct{ Key, Value, Source string }
	}
	json.Unmarshal(b, &settings)
	inForce := map[string]string{}
	for _, k := range settings.Keys {
		if k.Source == "file "+conf {
			inForce[k.Key] = k.Value
		}
	}
	if settings.File != conf || !settings.FileRead || inForce["max_batch"] != "200" || inForce["drain_timeout"] != "15s" || inForce["log_level"] != "debug" {
		t.Fatalf("the settings in force are not the example's (%v): %s", inForce, b)
	}
	if p, _ := st["problems"].([]any); len(p) != 0 {
		t.Fatalf("problems with the README's config example: %v", p)
	}
}

// TestREADMEFilesCoverTheGuides: a Markdown file of the repository with a
// shell command or a config-file example is in readmeFiles, so that
// TestREADMETopToBottom runs (or knows why it skips) each command and parses
// each example: a section moved out of the README to a page of its own
// stays checked.
func TestREADMEFilesCoverTheGuides(t *testing.T) {
	checked := map[string]bool{}
	for _, f := range readmeFiles {
		checked[f] = true
	}
	checkedBlock := regexp.MustCompile("(?m)^```(sh\n|toml\n# ~/.config/hearth/config.toml)")
	for _, f := range docFiles(t) {
		raw, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		if !checked[f] && checkedBlock.Match(raw) {
			t.Errorf("%s has a shell command or a config example but is not in readmeFiles (test/readme_test.go): add it where a reader meets it", f)
		}
	}
	for f := range checked {
		if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(f))); err != nil {
			t.Errorf("readmeFiles names %s: %v", f, err)
		}
	}
}

type stepResult struct {
	code int
	out  string
}

// parseSteps reads the script's output: "@@step N", the command's output,
// "@@rc N CODE".
func parseSteps(out string) map[int]stepResult {
	res := map[int]stepResult{}
	var cur bytes.Buffer
	for _, line := range strings.SplitAfter(out, "\n") {
		var i, code int
		switch {
		case strings.HasPrefix(line, "@@step "):
			cur.Reset()
		case strings.HasPrefix(line, "@@rc "):
			fmt.Sscanf(line, "@@rc %d %d", &i, &code)
			res[i] = stepResult{code, cur.String()}
		default:
			cur.WriteString(line)
		}
	}
	return res
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// waitGone waits for pid to exit.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d did not exit", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHelpTexts: `hearth -h` says the shim hands its pipes over (it relays
// only where it cannot), and `hearthd -h` where the data, the config file
// and the socket are, and when the socket name is hashed.
func TestHelpTexts(t *testing.T) {
	out, err := exec.Command(bin.hearth, "-h").Output()
	if err != nil || !strings.Contains(string(out), "hands its stdin and stdout to the daemon") || strings.HasPrefix(strings.SplitN(string(out), "\n", 3)[2], "Relays") {
		t.Fatalf("hearth -h: %v\n%s", err, out)
	}
	out, err = exec.Command(bin.hearthd, "-h").Output()
	for _, want := range []string{"~/.local/share/hearth unless HEARTH_HOME", "~/.config/hearth/config.toml unless HEARTH_CONFIG",
		"hearthd-<hash>.sock", "a HOME that is not your account's home directory"} {
		if err != nil || !strings.Contains(strings.Join(strings.Fields(string(out)), " "), want) {
			t.Fatalf("hearthd -h lacks %q: %v\n%s", want, err, out)
		}
	}
}
