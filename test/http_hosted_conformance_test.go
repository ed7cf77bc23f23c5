//go:build unix

package test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// conformanceChecks runs one scenario of the official conformance suite
// against url and returns each check's status by id, and the output.
func conformanceChecks(t *testing.T, node, suite, url, scenario, version string) (map[string]string, string) {
	t.Helper()
	out, _ := exec.Command(node, suite, "server", "--url", url, "--scenario", scenario, "--spec-version", version).CombinedOutput()
	text := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(string(out), "")
	checks := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\S+ \[([^\]]+?)\s*\] (SUCCESS|FAILURE|WARNING|INFO|SKIPPED)\b`).FindAllStringSubmatch(text, -1) {
		if prev := checks[m[1]]; prev == "" || prev == "SUCCESS" {
			checks[m[1]] = m[2] // a check that fails once fails
		}
	}
	return checks, text
}

// The official conformance suite's 2025-11-25 server scenarios, run against
// server-everything hosted behind hearth at /servers/NAME/mcp, pass every
// check they pass against the same server served directly over its own
// Streamable HTTP. The suite's reference server, everything-server.ts,
// ships with neither the npm package nor any other, so server-everything
// is the closest real server; the checks of the reference server's own
// tools (test_tool_with_progress and the like) fail both ways, and what
// counts is that hearth loses none of the others.
func TestHTTPHostedConformanceMatchesDirect(t *testing.T) {
	server := npmServer(t, "server-everything")
	suite, _ := filepath.Abs(filepath.Join("conformance", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"))
	_, err := os.Stat(suite)
	needOrSkip(t, err == nil, "test/conformance/node_modules (npm ci in test/conformance)")
	node, err := node22Path()
	needOrSkip(t, err == nil, fmt.Sprintf("Node 22 (npx -y node@22: %v)", err))

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	direct := exec.Command(node, server, "streamableHttp")
	direct.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := direct.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Process.Kill(); direct.Wait() })
	directURL := fmt.Sprintf("http://localhost:%d/mcp", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(directURL)
		if err == nil {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything never listened on %d: %v", port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	dir := shortTempDir(t)
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[servers.everything]\ncommand = %q\nargs = [%q]\nsharing = \"global\"\n", node, server)), 0o600)
	d := startHTTPDaemon(t, "HEARTH_CONFIG="+cfg, "HEARTH_HTTP_AUTH=none")
	hostedURL := strings.TrimSuffix(d.url, "/mcp") + "/servers/everything/mcp"

	// Scenarios whose checks do not all name the reference server's own
	// tools, and those of the request-bound frames hearth routes
	// (progress, sampling, logging, subscriptions).
	scenarios := []string{"server-initialize", "server-session-lifecycle", "logging-set-level", "ping",
		"tools-list", "server-sse-polling", "server-sse-multiple-streams", "resources-list", "prompts-list",
		"resources-subscribe", "tools-call-with-logging", "tools-call-sampling", "tools-call-with-progress"}
	passedDirect := 0
	for _, sc := range scenarios {
		// The two runs share nothing (two servers, two suite processes):
		// they run at once, which halves the test's time.
		var want map[string]string
		directDone := make(chan struct{})
		go func() {
			defer close(directDone)
			want, _ = conformanceChecks(t, node, suite, directURL, sc, "2025-11-25")
		}()
		got, text := conformanceChecks(t, node, suite, hostedURL, sc, "2025-11-25")
		<-directDone
		for id, status := range want {
			if status != "SUCCESS" {
				continue
			}
			passedDirect++
			if got[id] != "SUCCESS" {
				t.Errorf("%s: check %s passes directly, %q through hearth\n%s", sc, id, got[id], text)
			}
		}
	}
	if passedDirect == 0 {
		t.Fatal("no check passed directly: the suite's output was not read")
	}
}
