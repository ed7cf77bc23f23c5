//go:build unix

package test

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hearth-mcp/hearth/shim"
)

// claudeCLI is one Claude Code CLI the tests run: the version test/ts pins
// (@anthropic-ai/claude-code), the newest one that installed when it was
// last brought up to date (claude-code-next, an npm alias), and, when
// .ci/run found a newer release still, that one (HEARTH_CLAUDE_NEWEST, the
// path of its binary).
type claudeCLI struct{ version, path string }

// claudeCLIs are the Claude Code CLIs installed, each checked to run; the
// two test/ts pins are needed (CI has them), the newest is optional.
func claudeCLIs(t *testing.T) []claudeCLI {
	t.Helper()
	var out []claudeCLI
	for _, c := range []struct {
		path     string
		optional bool
	}{
		{filepath.Join("ts", "node_modules", "@anthropic-ai", "claude-code", "bin", "claude.exe"), false},
		{filepath.Join("ts", "node_modules", "claude-code-next", "bin", "claude.exe"), false},
		{os.Getenv("HEARTH_CLAUDE_NEWEST"), true},
	} {
		if c.path == "" {
			continue
		}
		p, _ := filepath.Abs(c.path)
		v, err := exec.Command(p, "--version").Output()
		version, _, _ := strings.Cut(strings.TrimSpace(string(v)), " ")
		if !c.optional {
			needOrSkip(t, err == nil && strings.Contains(string(v), "Claude Code"), "a working "+c.path+" (npm ci in test/ts)")
		} else if err != nil {
			t.Fatalf("HEARTH_CLAUDE_NEWEST=%s does not run: %v", c.path, err)
		}
		if slices.ContainsFunc(out, func(o claudeCLI) bool { return o.version == version }) {
			continue // the newest release is one test/ts pins already
		}
		out = append(out, claudeCLI{version, p})
	}
	return out
}

// claudeRecording is what one Claude Code CLI really sent a stdio server
// and the environment it started it with, as `claude mcp list` did it
// (recordserver records it).
type claudeRecording struct {
	Probe json.RawMessage // its server/discover params, if it probed first
	Init  json.RawMessage // its initialize params
	// Roots is its answer to roots/list, and Dir the directory it ran in:
	// it answers with that directory.
	Roots json.RawMessage
	Dir   string
	Env   []string // the server's environment
	Own   []string // the CLI's own (what the test started it with)
}

// claudeRecordings holds one recording per CLI path for the whole run.
var claudeRecordings sync.Map // path -> *claudeRecordingOnce

type claudeRecordingOnce struct {
	once sync.Once
	rec  *claudeRecording
	err  string
}

// entryToken is the one variable the recording entry sets.
const entryToken = "RECORDED_ENTRY_TOKEN"

// recordClaude runs `claude mcp list` once per CLI on an entry that starts
// recordserver with entryToken in its env, and returns what it recorded.
func recordClaude(t *testing.T, cli claudeCLI) *claudeRecording {
	t.Helper()
	v, _ := claudeRecordings.LoadOrStore(cli.path, &claudeRecordingOnce{})
	o := v.(*claudeRecordingOnce)
	o.once.Do(func() { o.rec, o.err = recordClaudeOnce(cli) })
	if o.err != "" {
		t.Fatalf("recording Claude Code %s: %s", cli.version, o.err)
	}
	return o.rec
}

func recordClaudeOnce(cli claudeCLI) (*claudeRecording, string) {
	home, err := os.MkdirTemp("", "hc")
	if err != nil {
		return nil, err.Error()
	}
	defer os.RemoveAll(home)
	project, out := filepath.Join(home, "proj"), filepath.Join(home, "out")
	os.MkdirAll(project, 0o755)
	os.MkdirAll(out, 0o755)
	cfg, _ := json.Marshal(map[string]any{"numStartups": 3, "mcpServers": map[string]any{
		"rec": map[string]any{"type": "stdio", "command": filepath.Join(bin.dir, "recordserver"), "args": []string{out},
			"env": map[string]string{entryToken: "from the entry"}}}})
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), cfg, 0o600); err != nil {
		return nil, err.Error()
	}
	env := claudeEnv(home, home)
	cmd := exec.Command(cli.path, "mcp", "list")
	cmd.Dir, cmd.Env = project, env
	listed, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(listed, []byte("rec: ")) || !bytes.Contains(listed, []byte("Connected")) {
		return nil, "claude mcp list: " + string(listed)
	}
	rec := &claudeRecording{Dir: project, Own: env}
	files, _ := filepath.Glob(filepath.Join(out, "frames-*.jsonl"))
	envs, _ := filepath.Glob(filepath.Join(out, "env-*"))
	if len(files) == 0 || len(envs) == 0 {
		return nil, "recordserver recorded nothing: " + string(listed)
	}
	b, _ := os.ReadFile(envs[0])
	rec.Env = strings.Split(string(b), "\x00")
	b, _ = os.ReadFile(files[0])
	for _, line := range bytes.Split(b, []byte("\n")) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch {
		case m.Method == "server/discover" && rec.Probe == nil:
			rec.Probe = m.Params
		case m.Method == "initialize" && rec.Init == nil:
			rec.Init = m.Params
		case string(m.ID) == `"recordserver-roots"`:
			rec.Roots = m.Result
		}
	}
	if rec.Init == nil {
		return nil, "no initialize recorded: " + string(b)
	}
	return rec, ""
}

// Every variable the real Claude Code CLI passes a stdio server beyond its
// own environment is classified: the entry's (the one its env sets), or
// one hearth knows Claude Code adds for its own bookkeeping (its session,
// its notes), which keys no instance and reaches no shared server
// (docs/decisions/0057-client-variables.md). The shim's own rule
// (shim.EntryEnv, comparing with the CLI's environment as it does with its
// parent's) is run on what the CLI really passed. A Claude Code release
// that adds a variable the rule does not cover fails here, naming it: run
// by CI on the versions test/ts pins and on the newest release
// (.ci/run, HEARTH_CLAUDE_NEWEST).
func TestClaudeCodeVariablesAreClassified(t *testing.T) {
	for _, cli := range claudeCLIs(t) {
		t.Run(cli.version, func(t *testing.T) {
			rec := recordClaude(t, cli)
			entry, client := shim.EntryEnv(rec.Env, rec.Own, true, false, nil)
			if want := map[string]string{entryToken: "from the entry"}; !maps.Equal(entry, want) {
				var unclassified []string
				for k := range entry {
					if k != entryToken {
						unclassified = append(unclassified, k)
					}
				}
				slices.Sort(unclassified)
				t.Errorf("Claude Code %s passes its server variables hearth has not classified: %s (they would key an instance per session; add them to shim/clientenv.go and decision 0057); the entry's taken as %v",
					cli.version, strings.Join(unclassified, ", "), slices.Sorted(maps.Keys(entry)))
			}
			if _, ok := client["CLAUDE_CODE_SESSION_ID"]; !ok {
				t.Errorf("Claude Code %s's session id was not taken for the client's: %v", cli.version, slices.Sorted(maps.Keys(client)))
			}
			t.Logf("Claude Code %s adds: %s", cli.version, strings.Join(slices.Sorted(maps.Keys(client)), " "))
		})
	}
}
