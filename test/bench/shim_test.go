//go:build unix

package bench

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// diffLine asks for the patch between two small documents: a small real
// tool call, served by hearth and by the go-sdk peer alike.
const diffLine = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"diff_assets","arguments":{` +
	`"base":{"name":"a","size":3,"tags":["x","y"],"nested":{"k":1}},"new":{"name":"b","size":3,"tags":["x"],"nested":{"k":2,"j":true}}}}}`

// shimEnvFor is the environment of a shim of the daemon serving runtime.
func shimEnvFor(runtime string, extra ...string) []string {
	return append(append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "HEARTH_HOME="+filepath.Join(runtime, "home"), "MCP_SOCKET_PATH=",
		"HEARTH_NO_AUTOSTART=1", "HEARTH_SHIM_RELAY="), extra...)
}

// startShimConn starts a shim and returns an initialized connection to it.
func startShimConn(b *testing.B, env []string) (*conn, *exec.Cmd) {
	cmd := exec.Command(bins.hearth)
	cmd.Env = env
	c, in := spawnConn(b, cmd)
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	c.initialize(b)
	return c, cmd
}

// BenchmarkShimVsPeers: ping and diff_assets of two small documents, one
// request at a time, through the shim handing the client's pipes to the
// daemon (direct), through the shim copying frames (relay), straight to the
// daemon's socket, to `hearthd stdio` and to a go-sdk server spawned
// directly: interleaved in one run, nine rounds. Targets: through the shim
// p50 ≤ 1.3× `hearthd stdio`, and below the go-sdk server.
func BenchmarkShimVsPeers(b *testing.B) {
	sock, runtime := startSocketDaemonIn(b)
	direct, _ := startShimConn(b, shimEnvFor(runtime))
	relay, _ := startShimConn(b, shimEnvFor(runtime, "HEARTH_SHIM_RELAY=1"))
	nc, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { nc.Close() })
	socket := newConn(nc)
	socket.initialize(b)
	stdio := stdioPeer(b, bins.hearthd, "stdio")
	sdk := stdioPeer(b, bins.sdkserver)
	all := []*conn{direct, relay, socket, stdio, sdk}
	names := []string{"shim", "relay", "socket", "stdio", "gosdk"}
	warm(b, 300, all, pingLine, diffLine)
	for _, c := range all {
		if c.roundTrip(b, diffLine); !strings.Contains(string(c.reply()), `"patch":[`) {
			b.Fatalf("diff_assets: %.300s", c.reply())
		}
	}
	b.ResetTimer()
	results := map[string][][][]time.Duration{}
	for _, req := range []struct{ name, line string }{{"ping", pingLine}, {"diff", diffLine}} {
		var cs []contender
		for i, c := range all {
			cs = append(cs, contender{names[i], rt(b, c, req.line)})
		}
		results[req.name] = interleave(rounds, perRound(b), block, cs...)
	}
	b.StopTimer()
	for _, req := range []string{"ping", "diff"} {
		lat := results[req]
		for i, name := range names {
			roundQuantiles(b, req+"-"+name+"-", lat[i])
		}
		roundRatio(b, req+"-shim-over-stdio", lat[0], lat[3])
		roundRatio(b, req+"-gosdk-over-shim", lat[4], lat[0])
		roundRatio(b, req+"-relay-over-shim", lat[1], lat[0])
	}
}

// pss reads a process's proportional set size (shared pages divided among
// the processes that map them) and resident set size, in kB.
func pss(pid int) (pssKB, rssKB int) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		var v int
		fmt.Sscan(f[1], &v)
		switch f[0] {
		case "Pss:":
			pssKB = v
		case "Rss:":
			rssKB = v
		}
	}
	return pssKB, rssKB
}

// BenchmarkSessionsPSS: ten client sessions through shims (each handing
// its pipes to the one daemon) against ten go-sdk servers spawned directly,
// started side by side. Their PSS (shared pages divided among the processes
// that map them) is taken twice: once all are attached (initialize,
// tools/list), and again after each session has made max(b.N/1000, 50)
// diff_assets calls and pings; three rounds of fresh processes. What ten
// sessions cost hearth is the shims plus what they grew the daemon by; the
// daemon's own base is paid once for every client of the user, and is
// reported with it too.
func BenchmarkSessionsPSS(b *testing.B) {
	const sessions = 10
	calls := max(b.N/1000, 50)
	fig := map[string][]float64{}
	for r := 0; r < 3; r++ {
		_, runtime := startSocketDaemonIn(b)
		pid := daemonPID(b, runtime)
		before, _ := pss(pid)
		env := shimEnvFor(runtime)
		var shims, sdks []*exec.Cmd
		var conns []*conn
		for i := 0; i < sessions; i++ {
			c, cmd := startShimConn(b, env)
			shims = append(shims, cmd)
			cmd = exec.Command(bins.sdkserver)
			s, in := spawnConn(b, cmd)
			b.Cleanup(func() { in.Close(); cmd.Wait() })
			s.initialize(b)
			sdks = append(sdks, cmd)
			conns = append(conns, c, s)
		}
		measure := func(phase string) {
			time.Sleep(200 * time.Millisecond) // let the last replies' buffers go
			var sh, g, rss float64
			for i := range shims {
				p, r := pss(shims[i].Process.Pid)
				sh += float64(p) / 1024
				rss = max(rss, float64(r)/1024)
				p, _ = pss(sdks[i].Process.Pid)
				g += float64(p) / 1024
			}
			after, _ := pss(pid)
			d, grew := float64(after)/1024, float64(after-before)/1024
			fig[phase+"shims-PSS-MB"] = append(fig[phase+"shims-PSS-MB"], sh)
			fig[phase+"shim-max-RSS-MB"] = append(fig[phase+"shim-max-RSS-MB"], rss)
			fig[phase+"daemon-PSS-MB"] = append(fig[phase+"daemon-PSS-MB"], d)
			fig[phase+"sessions-cost-PSS-MB"] = append(fig[phase+"sessions-cost-PSS-MB"], sh+grew)
			fig[phase+"with-daemon-PSS-MB"] = append(fig[phase+"with-daemon-PSS-MB"], sh+d)
			fig[phase+"gosdk-PSS-MB"] = append(fig[phase+"gosdk-PSS-MB"], g)
		}
		for _, c := range conns {
			c.roundTrip(b, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
		}
		measure("attached-")
		for _, c := range conns {
			for range calls {
				c.roundTrip(b, diffLine)
				c.roundTrip(b, pingLine)
			}
		}
		measure("used-")
	}
	for name, v := range fig {
		reportSpread(b, name, spreadOf(v))
	}
}

// BenchmarkShimUnderLoad: one client pipelining b.N requests (pings,
// diff_assets, and a tools/list, whose reply is longer than one atomic
// write, every 50), 32 in flight, through a shim, direct and relaying in
// turn (three rounds each); the shim's resident set is sampled every 10 ms.
// Target: under 4 MB.
func BenchmarkShimUnderLoad(b *testing.B) {
	_, runtime := startSocketDaemonIn(b)
	n := max(b.N, 20000)
	var peak = map[string][]float64{}
	var rate = map[string][]float64{}
	for r := 0; r < 3; r++ {
		for _, mode := range []string{"shim", "relay"} {
			extra := []string{}
			if mode == "relay" {
				extra = append(extra, "HEARTH_SHIM_RELAY=1")
			}
			c, cmd := startShimConn(b, shimEnvFor(runtime, extra...))
			stop := make(chan struct{})
			maxRSS := make(chan int)
			go func() {
				m := 0
				t := time.NewTicker(10 * time.Millisecond)
				defer t.Stop()
				for {
					if v := rssKB(cmd.Process.Pid); v > m {
						m = v
					}
					select {
					case <-stop:
						maxRSS <- m
						return
					case <-t.C:
					}
				}
			}()
			t0 := time.Now()
			pipeline(b, c, n, 32, func(i int) string {
				switch {
				case i%50 == 0:
					return `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`
				case i%2 == 0:
					return diffLine
				}
				return pingLine
			})
			rate[mode] = append(rate[mode], float64(n)/time.Since(t0).Seconds())
			close(stop)
			peak[mode] = append(peak[mode], float64(<-maxRSS)/1024)
		}
	}
	for _, mode := range []string{"shim", "relay"} {
		reportSpread(b, mode+"-max-RSS-MB", spreadOf(peak[mode]))
		reportSpread(b, mode+"-req/s", spreadOf(rate[mode]))
	}
}

// pipeline sends n requests on c keeping up to window in flight, and reads
// every reply.
func pipeline(b *testing.B, c *conn, n, window int, line func(int) string) {
	var wg sync.WaitGroup
	wg.Add(1)
	sent := make(chan struct{}, window)
	go func() {
		defer wg.Done()
		for range n {
			if !c.sc.Scan() {
				b.Error("the stream ended")
				return
			}
			<-sent
		}
	}()
	for i := 0; i < n; i++ {
		sent <- struct{}{}
		c.send(line(i))
		if len(sent) == window || i == n-1 {
			c.w.Flush()
		}
	}
	c.w.Flush()
	wg.Wait()
}
