//go:build unix

package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRemoteClientConformance runs the official conformance suite's client
// authorization scenarios, every one that the 2025-11-25 and the
// 2026-07-28 requirement sets score (`list --requirements`, the auth/
// ones), each at its revision's wire, with hearth as the client of the
// suite's server: test/internal/remoteclient -hearth starts a daemon of
// its own and is the stdio client of `hearth run --url URL` (the daemon's
// hosted instance, remote transport, authorization client, vault and
// opener do the rest). The daemon signs in without a person:
// HEARTH_OPEN_URL names remoteclient in -browse mode, which follows the
// authorization server's redirect to the daemon's loopback listener as a
// browser would. The pre-registration scenario's client is configured on
// the server's entry ([servers.conformance] client_id, client_secret the
// name of a secret stored with `hearthd secret set`, client_issuer) and
// reached with `hearth run conformance`; the client ID metadata document
// is the URL the suite expects (HEARTH_CLIENT_METADATA_URL). A few
// transport scenarios of the sets that this client's conversation covers
// run too (the others need a full client: elicitation, sampling,
// arguments of the suite's own tools).
func TestRemoteClientConformance(t *testing.T) {
	suite, _ := filepath.Abs(filepath.Join("conformance", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"))
	_, err := os.Stat(suite)
	needOrSkip(t, err == nil, "test/conformance/node_modules (npm ci in test/conformance)")
	node, err := node22Path()
	needOrSkip(t, err == nil, fmt.Sprintf("Node 22 (npx -y node@22: %v)", err))
	client := filepath.Join(shortTempDir(t), "remoteclient")
	if out, err := exec.Command("go", "build", "-o", client, "github.com/hearth-mcp/hearth/test/internal/remoteclient").CombinedOutput(); err != nil {
		t.Fatalf("building remoteclient: %v\n%s", err, out)
	}
	transport := map[string][]string{
		"2025-11-25": {"initialize", "sse-retry"},
		"2026-07-28": {"http-standard-headers", "http-invalid-tool-headers"},
	}
	start := time.Now()
	ran := 0
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		out, err := exec.Command(node, suite, "list", "--requirements", rev).CombinedOutput()
		if err != nil {
			t.Fatalf("list --requirements %s: %v\n%s", rev, err, out)
		}
		scenarios := requiredAuthScenarios(string(out))
		if len(scenarios) < 10 {
			t.Fatalf("the %s set lists only %d client authorization scenarios:\n%s", rev, len(scenarios), out)
		}
		for _, sc := range append(scenarios, transport[rev]...) {
			ran++
			t.Run(rev+"/"+sc, func(t *testing.T) {
				t.Parallel()
				cmd := exec.Command(node, suite, "client", "--command", client+" -hearth "+bin.dir+" -client-metadata-url=https://conformance-test.local/client-metadata.json",
					"--scenario", sc, "--spec-version", rev)
				cmd.Env = append(os.Environ(), "HEARTH_OPEN_URL="+client+" -browse")
				cmd.Dir = t.TempDir() // the suite writes its results/ where it runs
				raw, err := cmd.CombinedOutput()
				text := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(string(raw), "")
				if err != nil || !strings.Contains(text, "OVERALL: PASSED") || !regexp.MustCompile(`(?m)^Passed: \d+/\d+, 0 failed, 0 warnings$`).MatchString(text) {
					t.Fatalf("%s at %s: %v\n%s", sc, rev, err, text)
				}
			})
		}
	}
	t.Cleanup(func() { t.Logf("%d scenarios in %s", ran, time.Since(start).Round(100*time.Millisecond)) })
}

// requiredAuthScenarios are the client authorization scenarios a
// requirement set scores: the auth/ lines of its "Client scenarios"
// section (what it runs without scoring is listed after it).
func requiredAuthScenarios(list string) []string {
	_, rest, ok := strings.Cut(list, "Client scenarios")
	if !ok {
		return nil
	}
	section, _, _ := strings.Cut(rest, "\n\n")
	var out []string
	for _, l := range strings.Split(section, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(l), "- "); ok && strings.HasPrefix(name, "auth/") {
			out = append(out, name)
		}
	}
	return out
}
