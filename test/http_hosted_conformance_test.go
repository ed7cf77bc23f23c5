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
	// (progress, sampling, logging, subscriptions); at 2026-07-28, those of
	// the era bridge (decision 0072: discovery, input_required results,
	// caching hints) too.
	scenarios := map[string][]string{
		"2025-11-25": {"server-initialize", "server-session-lifecycle", "logging-set-level", "ping",
			"tools-list", "server-sse-polling", "server-sse-multiple-streams", "resources-list", "prompts-list",
			"resources-subscribe", "tools-call-with-logging", "tools-call-sampling", "tools-call-with-progress"},
		"2026-07-28": {"server-stateless", "tools-list", "tools-call-simple-text", "tools-call-with-progress",
			"server-sse-multiple-streams", "resources-list", "resources-read-text", "prompts-list", "prompts-get-simple",
			"caching", "input-required-result-basic-elicitation", "input-required-result-basic-sampling",
			"input-required-result-basic-list-roots", "input-required-result-request-state",
			"input-required-result-multiple-input-requests", "input-required-result-multi-round",
			"input-required-result-missing-input-response", "input-required-result-non-tool-request",
			"input-required-result-result-type", "input-required-result-unsupported-methods",
			"input-required-result-tampered-state", "input-required-result-capability-check",
			"input-required-result-ignore-extra-params", "input-required-result-validate-input"},
	}
	bridged := map[string][]string{"2026-07-28": {
		"sep-2549-tools-list-caching-hints", "sep-2549-prompts-list-caching-hints", "sep-2549-resources-list-caching-hints",
		"sep-2549-resources-templates-list-caching-hints", "sep-2549-resources-read-caching-hints", "sep-2549-ttl-non-negative",
		"sep-2549-cache-scope-valid", "sep-2575-http-server-method-not-found-404-ping",
		"sep-2575-http-server-method-not-found-404-logging-setlevel", "sep-2575-http-server-method-not-found-404-resources-subscribe",
		"sep-2575-http-server-method-not-found-404-resources-unsubscribe"}}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		passedDirect, passedHosted, total := 0, 0, 0
		hostedStatus := map[string]string{}
		for _, sc := range scenarios[version] {
			// The two runs share nothing (two servers, two suite
			// processes): they run at once, which halves the test's time.
			var want map[string]string
			directDone := make(chan struct{})
			go func() {
				defer close(directDone)
				want, _ = conformanceChecks(t, node, suite, directURL, sc, version)
			}()
			got, text := conformanceChecks(t, node, suite, hostedURL, sc, version)
			<-directDone
			for id, status := range got {
				if prev := hostedStatus[id]; prev == "" || prev == "SUCCESS" {
					hostedStatus[id] = status
				}
				total++
				if status == "SUCCESS" {
					passedHosted++
				} else if os.Getenv("HEARTH_CONFORMANCE_VERBOSE") != "" {
					t.Logf("%s %s: %s check %s %s through hearth, %q directly", version, sc, id, id, status, want[id])
				}
			}
			for id, status := range want {
				if status != "SUCCESS" {
					continue
				}
				passedDirect++
				if got[id] != "SUCCESS" {
					t.Errorf("%s %s: check %s passes directly, %q through hearth\n%s", version, sc, id, got[id], text)
				}
			}
		}
		t.Logf("%s: %d checks pass directly, %d of %d through hearth", version, passedDirect, passedHosted, total)
		// What the era bridge and the caching hints give a 2026-07-28
		// client of this 2025 server (decisions 0072, 0073), which the
		// server's own endpoint does not.
		for _, id := range bridged[version] {
			if got := hostedStatus[id]; got != "SUCCESS" {
				t.Errorf("%s: check %s is %q through hearth, want SUCCESS (the era bridge)", version, id, got)
			}
		}
		if passedDirect == 0 && passedHosted == 0 {
			t.Fatalf("%s: no check passed either way: the suite's output was not read", version)
		}
	}
}
