//go:build unix

package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkDaemonStart: a client's first shim with no daemon at all, as in
// BenchmarkTSClientCatalog's hearth side: exec `hearth` on a fresh data
// directory, timed to its answered initialize (the shim autostarts
// `hearthd serve` and waits for it to accept: the daemon's start is the
// time), then on the same connection to the answered list_schemas (a tool
// of the family whose start is the slowest, the schema catalog's compile:
// it must answer as it did, whenever the catalog is ready). Each iteration
// stops its daemon before the next. HEARTH_BENCH_BEFORE names a directory
// holding another build's hearth and hearthd: its side then runs
// interleaved with this build's, three rounds, and the ratios (before over
// this build) are reported. See docs/architecture.md, the daemon's start.
func BenchmarkDaemonStart(b *testing.B) {
	build(b)
	type side struct{ name, shim string }
	sides := []side{{"this", bins.hearth}}
	if dir := os.Getenv("HEARTH_BENCH_BEFORE"); dir != "" {
		sides = append(sides, side{"before", filepath.Join(dir, "hearth")})
	}
	var schemaLat [2][][]time.Duration
	for i := range schemaLat {
		schemaLat[i] = make([][]time.Duration, 3)
	}
	round := make([]int, len(sides))
	var cs []contender
	for i, s := range sides {
		cs = append(cs, contender{s.name, func() time.Duration {
			init, schema := coldShim(b, s.shim)
			r := min(round[i]/max(b.N/3, 1), 2)
			schemaLat[i][r] = append(schemaLat[i][r], schema)
			round[i]++
			return init
		}})
	}
	b.ResetTimer()
	lat := interleave(3, max(b.N/3, 1), 1, cs...)
	b.StopTimer()
	for i, s := range sides {
		roundQuantiles(b, s.name+"-initialize-", lat[i])
		roundQuantiles(b, s.name+"-list_schemas-", schemaLat[i])
	}
	if len(sides) == 2 {
		roundRatio(b, "initialize-before-over-this", lat[1], lat[0])
		roundRatio(b, "list_schemas-before-over-this", schemaLat[1], schemaLat[0])
	}
}

// coldShim runs shim on a fresh data directory with no daemon, and returns
// the time to its answered initialize and to its answered list_schemas
// after it (both from the exec); then it stops the daemon the shim started.
func coldShim(b *testing.B, shim string) (init, schema time.Duration) {
	b.Helper()
	runtime, err := os.MkdirTemp("", "hb")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(runtime)
	home := filepath.Join(runtime, "user")
	os.MkdirAll(home, 0o700)
	cmd := exec.Command(shim)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_RUNTIME_DIR="+runtime, "HEARTH_HOME="+filepath.Join(runtime, "home"),
		"MCP_SOCKET_PATH=", "MCP_READY_FILE=", "HEARTH_LOG_LEVEL=warn", "HEARTH_NO_AUTOSTART=", "HEARTH_CONFIG=",
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"))
	t0 := time.Now()
	c, in := spawnConn(b, cmd)
	c.roundTrip(b, initLine)
	init = time.Since(t0)
	c.w.WriteString(initedLine + "\n")
	c.roundTrip(b, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_schemas","arguments":{}}}`)
	schema = time.Since(t0)
	if r := string(c.reply()); !strings.Contains(r, `"schemas"`) || strings.Contains(r, `"isError":true`) {
		b.Fatalf("list_schemas: %.300s", r)
	}
	in.Close()
	cmd.Wait()
	for _, pid := range daemonsOf(home) {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	for deadline := time.Now().Add(20 * time.Second); len(daemonsOf(home)) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("hearthd still runs: %v", daemonsOf(home))
		}
	}
	return init, schema
}
