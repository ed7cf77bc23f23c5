// Package bench measures hearth and its peers in one run (README.md's
// Development section lists each benchmark and its latest figures): ping
// round trip p50/p99 over the socket, aggregate requests/s with 64
// connections, and the same trivial tool served by hearthd and by a go-sdk
// stdio server in one run, as a ratio. Run with: go test ./test/bench -run '^$' -bench . -benchtime 20000x
package bench

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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
}

func build(b *testing.B) {
	b.Helper()
	bins.once.Do(func() {
		dir, err := os.MkdirTemp("", "hearth-bench")
		if err != nil {
			bins.err = err
			return
		}
		bins.hearthd = filepath.Join(dir, "hearthd")
		bins.sdkserver = filepath.Join(dir, "sdkserver")
		bins.hearth = filepath.Join(dir, "hearth")
		for out, pkg := range map[string]string{
			bins.hearthd:   "github.com/hearth-mcp/hearth/daemon/hearthd",
			bins.hearth:    "github.com/hearth-mcp/hearth/shim/hearth",
			bins.sdkserver: "github.com/hearth-mcp/hearth/test/bench/internal/sdkserver",
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

// startSocketDaemonIn also returns the runtime dir (XDG_RUNTIME_DIR) it uses.
func startSocketDaemonIn(b *testing.B) (string, string) {
	b.Helper()
	build(b)
	dir, _ := os.MkdirTemp("", "hb")
	cmd := exec.Command(bins.hearthd, "serve")
	sock := filepath.Join(dir, "hearth", "hearthd.sock") // a fixed name, whatever the data directory
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir, "HEARTH_HOME="+filepath.Join(dir, "home"), "MCP_SOCKET_PATH="+sock, "MCP_READY_FILE=", "HEARTH_LOG_LEVEL=warn")
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

// conn is a raw NDJSON client.
type conn struct {
	w  *bufio.Writer
	sc *bufio.Scanner
}

func newConn(rw io.ReadWriter) *conn {
	sc := bufio.NewScanner(rw)
	// Peers may answer with whole graphs: the official memory server's
	// search_nodes returns every matching node, megabytes for a common word.
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	return &conn{w: bufio.NewWriter(rw), sc: sc}
}

func (c *conn) roundTrip(b *testing.B, line string) {
	c.w.WriteString(line)
	c.w.WriteByte('\n')
	if err := c.w.Flush(); err != nil {
		b.Fatal(err)
	}
	if !c.sc.Scan() {
		b.Fatalf("no reply: %v", c.sc.Err())
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
// pings in flight; b.N requests in total. Target: ≥ 80 000 req/s on 2 cores.
func BenchmarkAggregate64(b *testing.B) {
	const conns, window = 64, 32
	cs := dialInitialized(b, startSocketDaemon(b), conns)
	rate := acrossConns(b, cs, func(_ int, c *conn, per int) {
		sent, got := 0, 0
		for got < per {
			for sent < per && sent-got < window {
				c.w.WriteString(pingLine + "\n")
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
	})
	b.ReportMetric(rate, "req/s")
}

// acrossConns splits b.N requests evenly over cs, runs work on every
// connection at once (ci its index, per its share) and returns the requests
// per second of the whole run.
func acrossConns(b *testing.B, cs []*conn, work func(ci int, c *conn, per int)) float64 {
	per := b.N/len(cs) + 1
	b.ResetTimer()
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
	elapsed := time.Since(start)
	b.StopTimer()
	return float64(per*len(cs)) / elapsed.Seconds()
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

// BenchmarkToolCallVsGoSDK: the same trivial tool (daemon_status) called
// sequentially over stdio, served by hearthd and by a go-sdk server, in one
// run. Reports both latencies and hearth's speed-up (sdk time / hearth time).
func BenchmarkToolCallVsGoSDK(b *testing.B) {
	build(b)
	hearth := stdioPeer(b, bins.hearthd, "stdio")
	sdk := stdioPeer(b, bins.sdkserver)
	measure := func(c *conn, line string) []time.Duration {
		for i := 0; i < 500; i++ {
			c.roundTrip(b, line)
		}
		lat := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			c.roundTrip(b, line)
			lat = append(lat, time.Since(t0))
		}
		return lat
	}
	b.ResetTimer()
	hCall := measure(hearth, callLine)
	sCall := measure(sdk, callLine)
	hPing := measure(hearth, pingLine)
	sPing := measure(sdk, pingLine)
	b.StopTimer()
	hp50, _ := quantiles(b, "hearth-call-", hCall)
	sp50, _ := quantiles(b, "gosdk-call-", sCall)
	hping, _ := quantiles(b, "hearth-ping-", hPing)
	sping, _ := quantiles(b, "gosdk-ping-", sPing)
	b.ReportMetric(sp50/hp50, "call-speedup-x")
	b.ReportMetric(sping/hping, "ping-speedup-x")
}

// attach runs one client session against a fresh process: initialize answered,
// tools/list answered, stdin closed, process exited. It returns the time taken
// and the process's resident set size (kB) sampled while attached.
func attach(b *testing.B, env []string, path string, args ...string) (time.Duration, int) {
	t0 := time.Now()
	cmd := exec.Command(path, args...)
	cmd.Env = env
	c, in := spawnConn(b, cmd)
	c.roundTrip(b, initLine)
	c.w.WriteString(initedLine + "\n")
	c.roundTrip(b, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	rss := rssKB(cmd.Process.Pid)
	in.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%s exited with %v", path, err)
	}
	return time.Since(t0), rss
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
// tools/list, exit; and the same with `hearthd stdio` started cold, in one
// run. Targets: shim attach ≤ 5 ms median, shim RSS ≤ 4 MB.
func BenchmarkShimAttach(b *testing.B) {
	_, runtime := startSocketDaemonIn(b)
	shimEnv := append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "HEARTH_HOME="+filepath.Join(runtime, "home"), "MCP_SOCKET_PATH=", "HEARTH_NO_AUTOSTART=1")
	coldEnv := append(os.Environ(), "HEARTH_HOME="+b.TempDir(), "HEARTH_LOG_LEVEL=warn")
	shim := make([]time.Duration, 0, b.N)
	cold := make([]time.Duration, 0, b.N)
	maxRSS, maxColdRSS := 0, 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, rss := attach(b, shimEnv, bins.hearth)
		shim = append(shim, d)
		maxRSS = max(maxRSS, rss)
		d, rss = attach(b, coldEnv, bins.hearthd, "stdio")
		cold = append(cold, d)
		maxColdRSS = max(maxColdRSS, rss)
	}
	b.StopTimer()
	sp50, _ := quantiles(b, "shim-attach-", shim)
	cp50, _ := quantiles(b, "cold-stdio-attach-", cold)
	b.ReportMetric(float64(maxRSS), "shim-max-RSS-kB")
	b.ReportMetric(float64(maxColdRSS), "cold-stdio-max-RSS-kB")
	b.ReportMetric(cp50/sp50, "attach-speedup-x")
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
