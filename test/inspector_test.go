//go:build unix

package test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The MCP Inspector's CLI (@modelcontextprotocol/inspector, in test/ts),
// which needs Node 22: npx fetches it from the npm registry once
// (.ci/run does so before the tests).

// TestInspectorCLIThroughShim: the Inspector starts `hearth` with its
// minimal default environment; the shim finds the user's daemon through the
// data directory under HOME.
func TestInspectorCLIThroughShim(t *testing.T) {
	needInspector(t)
	env, pid := startUserDaemon(t)
	status := exerciseInspector(t, env, "socket", bin.hearth)
	if status["pid"] != float64(pid) {
		t.Fatalf("daemon_status names pid %v; the user's daemon is pid %d: the shim did not reach it through HOME", status["pid"], pid)
	}
}

// TestInspectorCLIOverStdio: the Inspector starts `hearthd stdio` in a home
// nobody serves.
func TestInspectorCLIOverStdio(t *testing.T) {
	needInspector(t)
	user := shortTempDir(t)
	t.Cleanup(func() { killDaemonsOfHome(user) })
	exerciseInspector(t, cleanEnv(user), "stdio", bin.hearthd, "stdio")
}

// TestInspectorStrictToolListing: `--strict` tools/list reports no schema
// portability finding, not even a warning, for any tool.
func TestInspectorStrictToolListing(t *testing.T) {
	needInspector(t)
	user := shortTempDir(t)
	t.Cleanup(func() { killDaemonsOfHome(user) })
	r := runInspector(t, cleanEnv(user), []string{bin.hearthd, "stdio"}, "--method", "tools/list", "--strict")
	if r.code != 0 {
		t.Fatalf("--strict tools/list exited %d\n%s", r.code, r.stderr)
	}
	var findings []string
	for _, tool := range r.out.SchemaFindings {
		for _, f := range tool.Findings {
			findings = append(findings, fmt.Sprintf("%s %s.%s: %s (%s): %s %s", tool.ToolName, f.Schema, f.Path, f.Rule, f.Severity, f.Issue, f.Suggestion))
		}
	}
	if len(findings) != 0 {
		t.Fatalf("%d schema portability findings:\n%s", len(findings), strings.Join(findings, "\n"))
	}
}

// exerciseInspector runs the Inspector CLI's methods against command and
// returns daemon_status's structured result; wantMode is its mode.
func exerciseInspector(t *testing.T, env []string, wantMode string, command ...string) map[string]any {
	t.Helper()

	// tools/list, with --strict: no error-severity portability finding
	// (exit 6); warnings are only logged here.
	r := runInspector(t, env, command, "--method", "tools/list", "--strict")
	if r.code != 0 {
		t.Fatalf("tools/list --strict exited %d\n%s", r.code, r.stderr)
	}
	var list struct {
		Tools []struct {
			Name        string
			InputSchema map[string]any
			Meta        map[string]any `json:"_meta"`
		}
	}
	r.result(t, &list)
	var listed []string
	for _, tl := range list.Tools {
		listed = append(listed, tl.Name)
		if tl.InputSchema["type"] != "object" || tl.Meta["dev.hearth/schemaVersion"] == nil {
			t.Fatalf("tool %s lacks contract fields through the Inspector: %+v", tl.Name, tl)
		}
	}
	warnings := 0
	for _, f := range r.out.SchemaFindings {
		warnings += len(f.Findings)
	}
	if warnings > 0 {
		t.Logf("the Inspector reports %d schema portability warnings (TestInspectorStrictToolListing)", warnings)
	}

	r = runInspector(t, env, command, "--method", "tools/call", "--tool-name", "daemon_status")
	status := r.call(t, "daemon_status", false)
	if status["mode"] != wantMode {
		t.Fatalf("daemon_status mode %v, want %s", status["mode"], wantMode)
	}
	sameTools(t, "the Inspector's tools/list", listed, status)

	r = runInspector(t, env, command, "--method", "tools/call", "--tool-name", "validate_asset",
		"--tool-arg", "schema=shader", "--tool-arg", "asset={}")
	if st := r.call(t, "validate_asset", false); st["ok"] != false || st["errors"] == nil {
		t.Fatalf("validate_asset of an empty shader: want ok=false, got %v", st)
	}

	// An unknown argument: the Inspector prints the isError result and
	// exits non-zero.
	r = runInspector(t, env, command, "--method", "tools/call", "--tool-name", "daemon_status", "--tool-arg", "unexpected=1")
	if st := r.call(t, "daemon_status with an unknown argument", true); st["code"] != "INVALID_REQUEST" {
		t.Fatalf("unknown argument: want code INVALID_REQUEST, got %v", st)
	}

	r = runInspector(t, env, command, "--method", "resources/list")
	if r.code != 0 {
		t.Fatalf("resources/list exited %d\n%s", r.code, r.stderr)
	}
	var resources struct {
		Resources []struct{ URI, MimeType string }
	}
	r.result(t, &resources)
	found := false
	for _, res := range resources.Resources {
		found = found || res.URI == "hearth://schemas/shader"
	}
	if !found {
		t.Fatalf("resources/list lacks hearth://schemas/shader: %s", r.raw)
	}
	return status
}

// inspectorRun is one Inspector CLI run with --format json: its stdout is
// one JSON object.
type inspectorRun struct {
	code   int
	raw    []byte
	stderr string
	out    struct {
		Result         json.RawMessage
		SchemaFindings []struct {
			ToolName string
			Findings []struct{ Rule, Severity, Schema, Path, Issue, Suggestion string }
		}
	}
}

func (r *inspectorRun) result(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.out.Result, v); err != nil || len(r.out.Result) == 0 {
		t.Fatalf("the Inspector's result %q: %v\n%s", r.raw, err, r.stderr)
	}
}

// call checks a tools/call run (isError as wanted, and the exit status that
// goes with it) and returns the structured result.
func (r *inspectorRun) call(t *testing.T, what string, wantError bool) map[string]any {
	t.Helper()
	var res struct {
		IsError           bool
		StructuredContent map[string]any
		Content           []struct{ Type, Text string }
	}
	r.result(t, &res)
	// An error is in the text only (structuredContent is for results).
	if res.IsError != wantError || (r.code == 0) == wantError || (res.StructuredContent == nil) != wantError {
		t.Fatalf("%s through the Inspector: exit %d, isError %v (want %v): %s\n%s", what, r.code, res.IsError, wantError, r.raw, r.stderr)
	}
	if len(res.Content) == 0 || res.Content[0].Type != "text" {
		t.Fatalf("%s through the Inspector: no text content: %s", what, r.raw)
	}
	if wantError {
		var m map[string]any
		if err := json.Unmarshal([]byte(res.Content[0].Text), &m); err != nil {
			t.Fatalf("%s through the Inspector: the error is not JSON text: %s", what, r.raw)
		}
		return m
	}
	return res.StructuredContent
}

// runInspector runs the Inspector CLI under Node 22 against command (the
// server it starts on stdio) with args, in env.
func runInspector(t *testing.T, env, command []string, args ...string) *inspectorRun {
	t.Helper()
	node, launcher := needInspector(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	argv := append([]string{launcher, "--cli", "--format", "json"}, args...)
	argv = append(append(argv, "--"), command...)
	cmd := exec.CommandContext(ctx, node, argv...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := &inspectorRun{raw: stdout.Bytes(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ctx.Err() == nil:
		r.code = ee.ExitCode()
	default:
		t.Fatalf("inspector %s: %v\n%s", strings.Join(args, " "), err, r.stderr)
	}
	if err := json.Unmarshal(r.raw, &r.out); err != nil {
		t.Fatalf("inspector %s (exit %d) printed %q: %v\n%s", strings.Join(args, " "), r.code, r.raw, err, r.stderr)
	}
	return r
}

// needInspector returns Node 22 and the Inspector's launcher (its
// mcp-inspector bin), skipping (failing in CI) when either is missing.
func needInspector(t *testing.T) (node, launcher string) {
	t.Helper()
	needNode(t)
	launcher, _ = filepath.Abs(filepath.Join("ts", "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js"))
	_, err := os.Stat(launcher)
	needOrSkip(t, err == nil, "test/ts/node_modules/@modelcontextprotocol/inspector (npm ci in test/ts)")
	node, err = node22Path()
	needOrSkip(t, err == nil, fmt.Sprintf("Node 22 (npx -y node@22: %v)", err))
	return node, launcher
}

// node22 is the Node 22 binary, resolved once per run.
var node22 struct {
	once sync.Once
	path string
	err  error
}

// node22Path returns the path of a Node 22 binary from npx's cache (npx
// fetches node@22 from the npm registry when it is not there yet).
func node22Path() (string, error) {
	node22.once.Do(func() {
		npx, err := exec.LookPath("npx")
		if err != nil {
			node22.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npx, "-y", "node@22", "-e", "console.log(process.version + ' ' + process.execPath)")
		cmd.Dir = os.TempDir() // no package.json around to pick another node
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			node22.err = fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
			return
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		version, path, _ := strings.Cut(lines[len(lines)-1], " ")
		if !strings.HasPrefix(version, "v22.") || !filepath.IsAbs(path) {
			node22.err = fmt.Errorf("npx -y node@22 printed %q", out)
			return
		}
		node22.path = path
	})
	return node22.path, node22.err
}

// TestInspectorCLIHostsACommand: the Inspector takes the `--` of
// `hearth run -- COMMAND` for its own, so hearth gets `run COMMAND`: the
// shim and daemon take a command without `--` (it is not a configured
// name), and the Inspector lists and calls the hosted server's tools.
func TestInspectorCLIHostsACommand(t *testing.T) {
	needInspector(t)
	env, _ := startUserDaemon(t)
	server := filepath.Join(bin.dir, "hostedserver")
	for _, command := range [][]string{
		{bin.hearth, "run", "--", server},
		{bin.hearth, "run", server},
	} {
		r := runInspector(t, env, command, "--method", "tools/list")
		if r.code != 0 || !strings.Contains(string(r.raw), `"echo"`) {
			t.Fatalf("%v: tools/list exited %d: %s\n%s", command, r.code, r.raw, r.stderr)
		}
		r = runInspector(t, env, command, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=through-inspector")
		if r.code != 0 || !strings.Contains(string(r.raw), "through-inspector pid=") {
			t.Fatalf("%v: tools/call exited %d: %s\n%s", command, r.code, r.raw, r.stderr)
		}
	}
}

// TestInspector015CLIHostsACommand: the Inspector 0.15 CLI, on the
// machine's Node (20), always takes the `--` for its own; `hearth run
// COMMAND` without it reaches the hosted server.
func TestInspector015CLIHostsACommand(t *testing.T) {
	node := needNode(t)
	cli, _ := filepath.Abs(filepath.Join("ts", "node_modules", "inspector-0.15", "cli", "build", "cli.js"))
	_, err := os.Stat(cli)
	needOrSkip(t, err == nil, "test/ts/node_modules/inspector-0.15 (npm ci in test/ts)")
	env, _ := startUserDaemon(t)
	server := filepath.Join(bin.dir, "hostedserver")
	for _, args := range [][]string{
		{"--cli", "--method", "tools/list", "--", bin.hearth, "run", "--", server},
		{"--cli", bin.hearth, "run", server, "--method", "tools/list"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, node, append([]string{cli}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil || !strings.Contains(string(out), `"echo"`) {
			t.Fatalf("inspector 0.15 %v: %v\n%s", args, err, out)
		}
	}
}
