//go:build unix

package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTypeScriptSDKOverStdio runs test/ts/client.mjs, which drives hearthd
// through the official @modelcontextprotocol/sdk StdioClientTransport.
func TestTypeScriptSDKOverStdio(t *testing.T) {
	runTypeScriptClient(t, append(os.Environ(), "HEARTH_HOME="+t.TempDir()), "stdio", bin.hearthd, "stdio")
}

// TestTypeScriptSDKThroughShim: the same session through `hearth`, which
// autostarts the socket daemon.
func TestTypeScriptSDKThroughShim(t *testing.T) {
	env, _, _ := shimEnv(t)
	runTypeScriptClient(t, env, "socket", bin.hearth)
}

func runTypeScriptClient(t *testing.T, env []string, wantMode string, command ...string) {
	t.Helper()
	out := runNodeScript(t, env, "client.mjs", command...)
	var got struct {
		Server struct{ Name string }
		Tools  []struct {
			Name        string
			Meta        map[string]any
			Annotations map[string]any
		}
		Status struct {
			IsError    bool
			Structured map[string]any
			Text       string
		}
		Bad struct {
			IsError bool
			Text    string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if got.Server.Name != "hearth" || len(got.Tools) == 0 {
		t.Fatalf("server/tools: %+v", got)
	}
	for _, tl := range got.Tools {
		if tl.Meta["dev.hearth/schemaVersion"] == nil || tl.Annotations == nil {
			t.Fatalf("tool %s lacks contract fields through the TS SDK: %+v", tl.Name, tl)
		}
	}
	if got.Status.IsError || got.Status.Structured["mode"] != wantMode {
		t.Fatalf("daemon_status: %+v", got.Status)
	}
	var text map[string]any
	if err := json.Unmarshal([]byte(got.Status.Text), &text); err != nil || text["mode"] != wantMode {
		t.Fatalf("content[0].text is not the same JSON: %q", got.Status.Text)
	}
	var bad map[string]any
	if !got.Bad.IsError || json.Unmarshal([]byte(got.Bad.Text), &bad) != nil || bad["code"] != "INVALID_REQUEST" {
		t.Fatalf("unknown argument: %+v", got.Bad)
	}
}

// TestTypeScriptSDKWorkspace: the TypeScript SDK, started in a repository,
// builds its index with progress, searches and reads a file through the
// shim; then it aborts a large build (notifications/cancelled) and the
// daemon's children are gone.
func TestTypeScriptSDKWorkspace(t *testing.T) {
	needNode(t)
	repo, big := gitRepo(t), goSrc(t)
	env, _, _ := shimEnv(t, "REPO="+repo, "BIG="+big)
	out := runNodeScript(t, env, "workspace.mjs", bin.hearth)
	var got struct {
		Build      map[string]any
		BuildError bool
		Progress   []float64
		Search     struct{ Hits []struct{ Path string } }
		Show       struct{ Text string }
		Aborted    string
		Live       int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if got.BuildError || got.Build["repo"] != repo || got.Build["files"] != 3.0 || len(got.Progress) == 0 {
		t.Fatalf("index_build: %+v", got)
	}
	if len(got.Search.Hits) != 3 || got.Search.Hits[0].Path != "greet.go" || got.Search.Hits[2].Path != "main.go" {
		t.Fatalf("search: %+v", got.Search)
	}
	if got.Show.Text != "3\t// Greeting is what main prints.\n" {
		t.Fatalf("show_file: %q", got.Show.Text)
	}
	if !strings.Contains(strings.ToLower(got.Aborted), "enough") || got.Live != 0 {
		t.Fatalf("aborted build: %q, live children %d", got.Aborted, got.Live)
	}
}

// needNode skips (fails in CI) when node or the npm packages are missing.
func needNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	needOrSkip(t, err == nil, "node")
	_, err = os.Stat(filepath.Join("ts", "node_modules", "@modelcontextprotocol", "sdk"))
	needOrSkip(t, err == nil, "test/ts/node_modules (npm ci in test/ts)")
	return node
}

// runNodeScript runs test/ts/<script> with args and returns its stdout; a
// failure shows the script's stderr.
func runNodeScript(t *testing.T, env []string, script string, args ...string) []byte {
	t.Helper()
	node := needNode(t)
	path, _ := filepath.Abs(filepath.Join("ts", script))
	cmd := exec.Command(node, append([]string{path}, args...)...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s: %v\n%s", script, err, stderr)
	}
	return out
}
