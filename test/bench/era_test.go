//go:build unix

package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The stateless era's opening: server/discover (what the Go SDK, the
// TypeScript SDK v2 and Claude Code send first), then the first tool call.
const (
	eraMeta         = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}`
	discoverLine    = `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{` + eraMeta + `}}`
	modernCallLine  = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"daemon_status","arguments":{},` + eraMeta + `}}`
	legacyInitLine  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`
	legacyCallLine  = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"daemon_status","arguments":{}}}`
	eraResultMarker = `"result":`
)

// firstResult execs the shim and times its opening up to the first tool
// result: modern (server/discover, tools/call) or legacy (initialize,
// initialized, tools/call). The shim's exit is not counted.
func firstResult(b *testing.B, env []string, shim string, modern bool) time.Duration {
	t0 := time.Now()
	cmd := exec.Command(shim)
	cmd.Env = env
	c, in := spawnConn(b, cmd)
	var reply string
	if modern {
		c.roundTrip(b, discoverLine)
		c.roundTrip(b, modernCallLine)
		reply = string(c.reply())
	} else {
		c.roundTrip(b, legacyInitLine)
		c.w.WriteString(initedLine + "\n")
		c.roundTrip(b, legacyCallLine)
		reply = string(c.reply())
	}
	d := time.Since(t0)
	if !strings.Contains(reply, eraResultMarker) || strings.Contains(reply, `"isError":true`) {
		b.Fatalf("first tool result: %s", reply)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("the shim exited with %v", err)
	}
	return d
}

// BenchmarkEraAttach: a modern client's attach through the shim
// (server/discover → first tool result) against a legacy client's
// (initialize → first tool result), interleaved in one run against one warm
// daemon, the order alternating so neither always goes first.
func BenchmarkEraAttach(b *testing.B) {
	_, runtime := startSocketDaemonIn(b)
	env := append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "HEARTH_HOME="+filepath.Join(runtime, "home"), "MCP_SOCKET_PATH=", "HEARTH_NO_AUTOSTART=1")
	modern := make([]time.Duration, 0, b.N)
	legacy := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		first := i%2 == 0
		for _, m := range []bool{first, !first} {
			d := firstResult(b, env, bins.hearth, m)
			if m {
				modern = append(modern, d)
			} else {
				legacy = append(legacy, d)
			}
		}
	}
	b.StopTimer()
	mp50, _ := quantiles(b, "modern-attach-", modern)
	lp50, _ := quantiles(b, "legacy-attach-", legacy)
	b.ReportMetric(lp50/mp50, "legacy/modern-x")
}
