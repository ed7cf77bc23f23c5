//go:build unix

// Package bench measures hearth and its peers in one run (docs/development.md
// lists each benchmark and its latest figures): ping
// round trip p50/p99 over the socket, aggregate requests/s with 64
// connections, and the same trivial tool served by hearthd and by a go-sdk
// stdio server in one run, as a ratio. Run with: go test ./test/bench -run '^$' -bench . -benchtime 20000x
package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var bins struct {
	once      sync.Once
	err       error
	hearthd   string
	hearth    string
	sdkserver string
	linerelay string
	// catalogserver answers from a catalog entry (BenchmarkTSClientCatalog's
	// lower bound).
	catalogserver string
}

func build(b *testing.B) {
	b.Helper()
	bins.once.Do(func() {
		// HEARTH_BENCH_BIN names a directory of binaries built before
		// (hearthd, hearth, sdkserver, linerelay, catalogserver), so that two builds can
		// be measured alternately in one session.
		dir, prebuilt := os.Getenv("HEARTH_BENCH_BIN"), true
		if dir == "" {
			var err error
			if dir, err = os.MkdirTemp("", "hearth-bench"); err != nil {
				bins.err = err
				return
			}
			prebuilt = false
		}
		bins.hearthd = filepath.Join(dir, "hearthd")
		bins.sdkserver = filepath.Join(dir, "sdkserver")
		bins.hearth = filepath.Join(dir, "hearth")
		bins.linerelay = filepath.Join(dir, "linerelay")
		bins.catalogserver = filepath.Join(dir, "catalogserver")
		if prebuilt {
			return
		}
		for out, pkg := range map[string]string{
			bins.hearthd:       "github.com/hearth-mcp/hearth/daemon/hearthd",
			bins.hearth:        "github.com/hearth-mcp/hearth/shim/hearth",
			bins.sdkserver:     "github.com/hearth-mcp/hearth/test/bench/internal/sdkserver",
			bins.linerelay:     "github.com/hearth-mcp/hearth/test/bench/internal/linerelay",
			bins.catalogserver: "github.com/hearth-mcp/hearth/test/bench/internal/catalogserver",
		} {
			if o, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
				bins.err = fmt.Errorf("build %s: %v\n%s", pkg, err, o)
				return
			}
		}
	})
	if bins.err != nil {
		b.Fatal(bins.err)
	}
}

// startSocketDaemon runs `hearthd serve` in a temp runtime dir.
func startSocketDaemon(b *testing.B) string {
	sock, _ := startSocketDaemonIn(b)
	return sock
}

// startSocketDaemonIn also returns the runtime dir (XDG_RUNTIME_DIR) it uses;
// extraEnv is added to (and overrides) the daemon's environment.
func startSocketDaemonIn(b *testing.B, extraEnv ...string) (string, string) {
	b.Helper()
	build(b)
	dir, _ := os.MkdirTemp("", "hb")
	cmd := exec.Command(bins.hearthd, "serve")
	sock := filepath.Join(dir, "hearth", "hearthd.sock") // a fixed name, whatever the data directory
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir, "HEARTH_HOME="+filepath.Join(dir, "home"), "MCP_SOCKET_PATH="+sock, "MCP_READY_FILE=", "HEARTH_LOG_LEVEL=warn")
	cmd.Env = append(cmd.Env, extraEnv...)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		os.RemoveAll(dir)
	})
	ready := filepath.Join(dir, "hearth", "hearthd.ready")
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			return sock, dir
		}
		if time.Now().After(deadline) {
			b.Fatal("hearthd not ready")
		}
	}
}

// conn is a raw NDJSON client. Every request it sends gets an id of its
// own (ids are unique among requests in flight, as docs/protocol.md asks).
type conn struct {
	w    *bufio.Writer
	sc   *bufio.Scanner
	next int
}

// send writes one frame, giving a request (its id first or after
// "jsonrpc") the connection's next id.
func (c *conn) send(line string) {
	for _, prefix := range []string{`{"jsonrpc":"2.0","id":`, `{"id":`} {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			c.next++
			line = prefix + strconv.Itoa(c.next) + rest[strings.IndexAny(rest, ",}"):]
			break
		}
	}
	c.w.WriteString(line)
	c.w.WriteByte('\n')
}

func newConn(rw io.ReadWriter) *conn {
	sc := bufio.NewScanner(rw)
	// Peers may answer with whole graphs: the official memory server's
	// search_nodes returns every matching node, megabytes for a common word.
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	return &conn{w: bufio.NewWriter(rw), sc: sc}
}

func (c *conn) roundTrip(b *testing.B, line string) {
	c.send(line)
	if err := c.w.Flush(); err != nil {
		b.Fatal(err)
	}
	// The reply, past any notification the server sends on its own (a
	// shared server-everything announces the tools it adds for the
	// capabilities hearth declares, and logs the roots it is given).
	for {
		if !c.sc.Scan() {
			b.Fatalf("no reply: %v", c.sc.Err())
		}
		if !bytes.HasPrefix(c.sc.Bytes(), []byte(`{"jsonrpc":"2.0","method":`)) {
			return
		}
	}
}

// reply is the last line roundTrip read.
func (c *conn) reply() []byte { return c.sc.Bytes() }

const (
	initLine   = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`
	initedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	pingLine   = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	callLine   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"daemon_status","arguments":{}}}`
)

func (c *conn) initialize(b *testing.B) {
	c.roundTrip(b, initLine)
	c.w.WriteString(initedLine + "\n")
	c.w.Flush()
}

// dialInitialized opens n initialized connections to the socket, closed when b ends.
func dialInitialized(b *testing.B, sock string, n int) []*conn {
	b.Helper()
	cs := make([]*conn, n)
	for i := range cs {
		nc, err := net.Dial("unix", sock)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { nc.Close() })
		cs[i] = newConn(nc)
		cs[i].initialize(b)
	}
	return cs
}

// contender is one side of an interleaved comparison: one timed request.
type contender struct {
	name string
	op   func() time.Duration
}

// interleave times every contender's op rounds times n, in blocks of block
// requests taken in turn (ABAB…), the order rotating from one block to the
// next so that none always goes first. Each contender's latencies come back
// by round: a load that comes and goes on a shared machine falls on all of
// them alike, and the rounds show how much it moved the figures.
func interleave(rounds, n, block int, cs ...contender) [][][]time.Duration {
	lat := make([][][]time.Duration, len(cs))
	for i := range lat {
		lat[i] = make([][]time.Duration, rounds)
	}
	turn := 0
	for r := 0; r < rounds; r++ {
		for done := 0; done < n; done += block {
			k := min(block, n-done)
			for j := range cs {
				i := (j + turn) % len(cs)
				for range k {
					lat[i][r] = append(lat[i][r], cs[i].op())
				}
			}
			turn++
		}
	}
	return lat
}

// spread is the range of a figure over the rounds of one run.
type spread struct{ lo, mid, hi float64 }

func spreadOf(v []float64) spread {
	sort.Float64s(v)
	return spread{v[0], v[len(v)/2], v[len(v)-1]}
}

func (s spread) String() string {
	return fmt.Sprintf("%.3g–%.3g", s.lo, s.hi)
}

func quantile(lat []time.Duration, q float64) float64 {
	l := append([]time.Duration(nil), lat...)
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	return float64(l[int(float64(len(l)-1)*q)].Nanoseconds()) / 1e3
}

// roundQuantiles reports a contender's p50 and p99 over its rounds: the
// median round's, and the lowest and highest (µs).
func roundQuantiles(b *testing.B, prefix string, rounds [][]time.Duration) (p50, p99 spread) {
	var a, z []float64
	for _, r := range rounds {
		a = append(a, quantile(r, 0.50))
		z = append(z, quantile(r, 0.99))
	}
	p50, p99 = spreadOf(a), spreadOf(z)
	reportSpread(b, prefix+"p50-µs", p50)
	reportSpread(b, prefix+"p99-µs", p99)
	return p50, p99
}

// roundRatio reports num's p50 over den's, round by round (each round's
// two figures were taken side by side).
func roundRatio(b *testing.B, name string, num, den [][]time.Duration) spread {
	var v []float64
	for r := range num {
		v = append(v, quantile(num[r], 0.5)/quantile(den[r], 0.5))
	}
	s := spreadOf(v)
	reportSpread(b, name+"-x", s)
	return s
}

// roundDelta reports, per round, num's p50 minus den's in microseconds
// (a cost added to den's), as a spread over the rounds.
func roundDelta(b *testing.B, name string, num, den [][]time.Duration) spread {
	var v []float64
	for r := range num {
		v = append(v, quantile(num[r], 0.5)-quantile(den[r], 0.5))
	}
	s := spreadOf(v)
	reportSpread(b, name+"-µs", s)
	return s
}

// reportSpread reports a spread as three metrics: name (the median round),
// name-lo and name-hi.
func reportSpread(b *testing.B, name string, s spread) {
	unit := ""
	if i := strings.LastIndexByte(name, '-'); i >= 0 {
		name, unit = name[:i], name[i:]
	}
	b.ReportMetric(s.mid, name+unit)
	b.ReportMetric(s.lo, name+"-lo"+unit)
	b.ReportMetric(s.hi, name+"-hi"+unit)
}

// timed times one call of f.
func timed(f func()) time.Duration {
	t0 := time.Now()
	f()
	return time.Since(t0)
}

// quantiles reports p50/p99 of the recorded round trips in microseconds.
func quantiles(b *testing.B, prefix string, lat []time.Duration) (p50, p99 float64) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p50 = float64(lat[len(lat)/2].Nanoseconds()) / 1e3
	p99 = float64(lat[len(lat)*99/100].Nanoseconds()) / 1e3
	b.ReportMetric(p50, prefix+"p50-µs")
	b.ReportMetric(p99, prefix+"p99-µs")
	return p50, p99
}

// BenchmarkPingSocket: sequential ping round trips on one socket connection.
// Target: p99 ≤ 250 µs.
func BenchmarkPingSocket(b *testing.B) {
	sock := startSocketDaemon(b)
	nc, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	c := newConn(nc)
	c.initialize(b)
	for i := 0; i < 1000; i++ { // warm up
		c.roundTrip(b, pingLine)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		c.roundTrip(b, pingLine)
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	quantiles(b, "", lat)
}

// BenchmarkAggregate64: 64 connections, each keeping a window of pipelined
// pings in flight; five rounds of at least 200 000 requests (20 000 took
// too little time to say anything on a busy machine). Target: ≥ 80 000
// req/s on 2 cores.
func BenchmarkAggregate64(b *testing.B) {
	const conns, window = 64, 32
	cs := dialInitialized(b, startSocketDaemon(b), conns)
	n := max(b.N, 200000)
	var rates []float64
	for r := 0; r < 5; r++ {
		rates = append(rates, acrossConns(b, cs, n, func(_ int, c *conn, per int) {
			sent, got := 0, 0
			for got < per {
				for sent < per && sent-got < window {
					c.send(pingLine)
					sent++
				}
				c.w.Flush()
				for got < sent && (sent == per || sent-got >= window/2) {
					if !c.sc.Scan() {
						b.Error("stream ended")
						return
					}
					got++
				}
			}
		}))
	}
	reportSpread(b, "req/s", spreadOf(rates))
}

// acrossConns splits n requests evenly over cs, runs work on every
// connection at once (ci its index, per its share) and returns the requests
// per second of the whole run.
func acrossConns(b *testing.B, cs []*conn, n int, work func(ci int, c *conn, per int)) float64 {
	per := n/len(cs) + 1
	start := time.Now()
	var wg sync.WaitGroup
	for ci, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(ci, c, per)
		}()
	}
	wg.Wait()
	return float64(per*len(cs)) / time.Since(start).Seconds()
}

// stdioPeer starts a stdio server and returns a connection to it.
func stdioPeer(b *testing.B, path string, args ...string) *conn {
	return stdioPeerEnv(b, nil, path, args...)
}

// stdioPeerEnv is stdioPeer with more environment (KEY=value).
func stdioPeerEnv(b *testing.B, env []string, path string, args ...string) *conn {
	b.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = append(append(os.Environ(), "HEARTH_HOME="+b.TempDir(), "HEARTH_LOG_LEVEL=warn"), env...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	c := newConn(struct {
		io.Reader
		io.Writer
	}{out, in})
	c.initialize(b)
	return c
}

// Interleaving: rounds of every comparison, each contender's requests in
// blocks taken in turn.
const (
	rounds = 9
	block  = 100
)

// perRound is how many requests each contender makes in each round.
func perRound(b *testing.B) int { return max(b.N/rounds, block) }

// rt times one round trip of line on c.
func rt(b *testing.B, c *conn, line string) func() time.Duration {
	return func() time.Duration { return timed(func() { c.roundTrip(b, line) }) }
}

// warm sends each line n times on each connection.
func warm(b *testing.B, n int, cs []*conn, lines ...string) {
	for _, c := range cs {
		for range n {
			for _, l := range lines {
				c.roundTrip(b, l)
			}
		}
	}
}

// BenchmarkToolCallVsGoSDK: the same trivial tool (daemon_status), and
// ping, called sequentially over stdio, served by hearthd and by a go-sdk
// server, interleaved in one run. Reports both latencies and hearth's
// speed-up (sdk time / hearth time), as ranges over the rounds.
func BenchmarkToolCallVsGoSDK(b *testing.B) {
	build(b)
	hearth := stdioPeer(b, bins.hearthd, "stdio")
	sdk := stdioPeer(b, bins.sdkserver)
	warm(b, 500, []*conn{hearth, sdk}, callLine, pingLine)
	b.ResetTimer()
	call := interleave(rounds, perRound(b), block, contender{"hearth", rt(b, hearth, callLine)}, contender{"gosdk", rt(b, sdk, callLine)})
	ping := interleave(rounds, perRound(b), block, contender{"hearth", rt(b, hearth, pingLine)}, contender{"gosdk", rt(b, sdk, pingLine)})
	b.StopTimer()
	roundQuantiles(b, "hearth-call-", call[0])
	roundQuantiles(b, "gosdk-call-", call[1])
	roundQuantiles(b, "hearth-ping-", ping[0])
	roundQuantiles(b, "gosdk-ping-", ping[1])
	roundRatio(b, "call-speedup", call[1], call[0])
	roundRatio(b, "ping-speedup", ping[1], ping[0])
}

// attach runs one client session against a fresh process: initialize answered,
// tools/list answered, stdin closed, process exited. It returns the time taken
// and the process's resident set size (kB) sampled while attached.
func attach(b *testing.B, env []string, path string, args ...string) (time.Duration, int) {
	t0 := time.Now()
	_, in, cmd := listTools(b, env, path, args...)
	rss := rssKB(cmd.Process.Pid)
	in.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%s exited with %v", path, err)
	}
	return time.Since(t0), rss
}

// listTools execs a client's server command, sends initialize (and
// initialized) and tools/list, and returns once the first frame after the
// tools/list is read: the connection, its stdin and the process.
func listTools(b *testing.B, env []string, path string, args ...string) (*conn, io.WriteCloser, *exec.Cmd) {
	cmd := exec.Command(path, args...)
	cmd.Env = env
	c, in := spawnConn(b, cmd)
	c.roundTrip(b, initLine)
	c.w.WriteString(initedLine + "\n")
	c.roundTrip(b, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	return c, in, cmd
}

func rssKB(pid int) int {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kb int
			fmt.Sscanf(strings.TrimPrefix(line, "VmRSS:"), "%d", &kb)
			return kb
		}
	}
	return 0
}

// BenchmarkShimAttach: exec hearth against a warm daemon, initialize,
// tools/list, exit; and the same with `hearthd stdio` started cold,
// alternating, in three rounds. Targets: shim attach ≤ 5 ms median, shim
// RSS ≤ 4 MB.
func BenchmarkShimAttach(b *testing.B) {
	_, runtime := startSocketDaemonIn(b)
	shimEnv := append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "HEARTH_HOME="+filepath.Join(runtime, "home"), "MCP_SOCKET_PATH=", "HEARTH_NO_AUTOSTART=1")
	coldEnv := append(os.Environ(), "HEARTH_HOME="+b.TempDir(), "HEARTH_LOG_LEVEL=warn")
	maxRSS, maxColdRSS := 0, 0
	b.ResetTimer()
	lat := interleave(3, max(b.N/3, 1), 1,
		contender{"shim", func() time.Duration {
			d, rss := attach(b, shimEnv, bins.hearth)
			maxRSS = max(maxRSS, rss)
			return d
		}},
		contender{"cold-stdio", func() time.Duration {
			d, rss := attach(b, coldEnv, bins.hearthd, "stdio")
			maxColdRSS = max(maxColdRSS, rss)
			return d
		}})
	b.StopTimer()
	roundQuantiles(b, "shim-attach-", lat[0])
	roundQuantiles(b, "cold-stdio-attach-", lat[1])
	b.ReportMetric(float64(maxRSS), "shim-max-RSS-kB")
	b.ReportMetric(float64(maxColdRSS), "cold-stdio-max-RSS-kB")
	roundRatio(b, "attach-speedup", lat[1], lat[0])
}

// spawnConn starts cmd with its stdio piped and returns a connection to it
// and its stdin (closing that ends the session).
func spawnConn(b *testing.B, cmd *exec.Cmd) (*conn, io.WriteCloser) {
	b.Helper()
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return newConn(struct {
		io.Reader
		io.Writer
	}{out, in}), in
}
