//go:build unix

package bench

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// everything is @modelcontextprotocol/server-everything's entry script in
// test/ts (npm ci there), a node server to host.
func everything(b *testing.B) (node, script string) {
	b.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node is missing")
	}
	script, _ = filepath.Abs(filepath.Join("..", "ts", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if _, err := os.Stat(script); err != nil {
		b.Skip("test/ts/node_modules is missing (npm ci in test/ts)")
	}
	return node, script
}

const statusLine = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"daemon_status","arguments":{}}}`

const echoLine = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`

// hostedRun starts `hearth run -- server...` against the daemon serving
// runtime and returns an initialized connection, its stdin and process.
func hostedRun(b *testing.B, runtime string, server ...string) (*conn, io.WriteCloser, *exec.Cmd) {
	cmd := exec.Command(bins.hearth, append([]string{"run", "--"}, server...)...)
	cmd.Env = shimEnvFor(runtime)
	c, in := spawnConn(b, cmd)
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	c.initialize(b)
	return c, in, cmd
}

// relayRun spawns server behind linerelay, a process that only copies
// lines, and returns an initialized connection.
func relayRun(b *testing.B, server ...string) *conn {
	cmd := exec.Command(bins.linerelay, server...)
	c, in := spawnConn(b, cmd)
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	c.initialize(b)
	return c
}

// directRun spawns server directly and returns an initialized
// connection and its process.
func directRun(b *testing.B, server ...string) (*conn, *exec.Cmd) {
	cmd := exec.Command(server[0], server[1:]...)
	cmd.Stderr = nil
	c, in := spawnConn(b, cmd)
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	c.initialize(b)
	return c, cmd
}

// childrenOf lists the live processes whose parent is pid.
func childrenOf(pid int) []int { return processesWhere(1, pid) }

// groupOf lists the live processes of process group pgid.
func groupOf(pgid int) []int { return processesWhere(2, pgid) }

// processesWhere lists the live processes whose stat field n after the
// command name (0 state, 1 ppid, 2 pgrp) is want.
func processesWhere(n, want int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > n && f[0] != "Z" && f[n] == strconv.Itoa(want) {
			out = append(out, p)
		}
	}
	return out
}

// processCost is what a process has spent so far, over all its threads:
// CPU time on them, and how many times one was switched out.
type processCost struct {
	cpu      time.Duration
	switches int
}

func costOf(pid int) processCost {
	var c processCost
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		dir := fmt.Sprintf("/proc/%d/task/%s/", pid, t.Name())
		if raw, err := os.ReadFile(dir + "schedstat"); err == nil {
			var ns int64
			fmt.Sscan(string(raw), &ns) // first field: time on the CPU, in ns
			c.cpu += time.Duration(ns)
		}
		raw, _ := os.ReadFile(dir + "status")
		for _, line := range strings.Split(string(raw), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				n, _ := strconv.Atoi(strings.TrimSpace(v))
				c.switches += n
			}
		}
	}
	return c
}

// BenchmarkHostedTenClients: ten clients of server-everything through
// `hearth run` against ten direct spawns of it, in one run. Reports the
// server processes and the PSS of each side (hearth: the upstream, the ten
// shims and what hosting added to the daemon), and the daemon's threads
// before and after the clients attached. Goal: one upstream and at most a
// fifth of the direct spawns' PSS.
func BenchmarkHostedTenClients(b *testing.B) {
	node, script := everything(b)
	_, runtime := startSocketDaemonIn(b)
	dpid := daemonPID(b, runtime)
	daemonBefore, _ := pss(dpid)
	threadsBefore := threadsOf(dpid)
	var shims []*exec.Cmd
	for range 10 {
		c, _, cmd := hostedRun(b, runtime, node, script)
		c.roundTrip(b, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		shims = append(shims, cmd)
	}
	var directs []*exec.Cmd
	for range 10 {
		c, cmd := directRun(b, node, script)
		c.roundTrip(b, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		directs = append(directs, cmd)
	}
	time.Sleep(500 * time.Millisecond) // let both sides settle
	b.ResetTimer()
	for range b.N {
	}
	b.StopTimer()
	// Each upstream leads a process group of its own (on Linux a keeper
	// shell and the server): count the whole group.
	ups := childrenOf(dpid)
	upPSS, shimPSS, directPSS := 0, 0, 0
	for _, g := range ups {
		for _, p := range groupOf(g) {
			v, _ := pss(p)
			upPSS += v
		}
	}
	for _, s := range shims {
		v, _ := pss(s.Process.Pid)
		shimPSS += v
	}
	for _, d := range directs {
		v, _ := pss(d.Process.Pid)
		directPSS += v
	}
	daemonAfter, _ := pss(dpid)
	hearthPSS := upPSS + shimPSS + max(daemonAfter-daemonBefore, 0)
	b.ReportMetric(float64(len(ups)), "hearth-upstreams")
	b.ReportMetric(float64(len(directs)), "direct-processes")
	b.ReportMetric(float64(upPSS), "upstream-PSS-kB")
	b.ReportMetric(float64(shimPSS), "shims-PSS-kB")
	b.ReportMetric(float64(daemonAfter-daemonBefore), "daemon-growth-PSS-kB")
	b.ReportMetric(float64(hearthPSS), "hearth-PSS-kB")
	b.ReportMetric(float64(directPSS), "direct-PSS-kB")
	b.ReportMetric(float64(hearthPSS)/float64(directPSS), "hearth-over-direct-PSS")
	b.ReportMetric(float64(threadsBefore), "daemon-threads-before")
	b.ReportMetric(float64(threadsOf(dpid)), "daemon-threads-attached")
}

// threadsOf is how many threads process pid has.
func threadsOf(pid int) int {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	return len(tasks)
}

// BenchmarkHostedAttach: a 2nd to 10th client of a warm hosted
// server-everything (exec `hearth run`, initialize and tools/list answered,
// exit) against a direct spawn of it doing the same, interleaved in three
// rounds. Goal: at least 10x faster.
func BenchmarkHostedAttach(b *testing.B) {
	node, script := everything(b)
	_, runtime := startSocketDaemonIn(b)
	first, _, _ := hostedRun(b, runtime, node, script) // the instance stays warm
	first.roundTrip(b, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	env := shimEnvFor(runtime)
	b.ResetTimer()
	lat := interleave(3, max(b.N/3, 1), 1,
		contender{"hosted", func() time.Duration { return untilListed(b, env, bins.hearth, "run", "--", node, script) }},
		contender{"direct", func() time.Duration { return untilListed(b, os.Environ(), node, script) }})
	b.StopTimer()
	roundQuantiles(b, "hosted-attach-", lat[0])
	roundQuantiles(b, "direct-attach-", lat[1])
	roundRatio(b, "attach-speedup", lat[1], lat[0])
}

// untilListed execs a client's server command and times it until
// initialize and tools/list are answered; then the process is ended
// (untimed: a node server may take its time to exit on stdin closing).
func untilListed(b *testing.B, env []string, path string, args ...string) time.Duration {
	t0 := time.Now()
	c, in, cmd := listTools(b, env, path, args...)
	// Skip notifications (server-everything announces its tools once
	// initialized) up to the answer.
	for !strings.Contains(string(c.reply()), `"tools"`) {
		if !c.sc.Scan() {
			b.Fatalf("no tools/list answer: %v", c.sc.Err())
		}
	}
	d := time.Since(t0)
	in.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		cmd.Process.Kill()
		<-done
	}
	return d
}

// BenchmarkHostedCall: ping and a small tool call (echo) through `hearth
// run` against server-everything spawned directly, one request at a time,
// interleaved in nine rounds. Goal: p50 within 50 µs of direct. Beside
// them, the same server behind linerelay, which only copies lines: what
// any process in the middle costs on this machine. Also reported: the
// daemon's context switches and CPU per hosted echo, steadier than a
// latency on a shared machine (two switches are the least: the request
// arrives, the reply arrives).
func BenchmarkHostedCall(b *testing.B) {
	node, script := everything(b)
	hostedCall(b, []string{node, script}, "echo", echoLine, "Echo: hi")
}

// BenchmarkHostedCallGo: BenchmarkHostedCall with the go-sdk server
// (sdkserver's daemon_status) as the upstream, so that it runs wherever Go
// does, CI included: what decision 0041's choice between raw and ordinary
// system calls is measured with.
func BenchmarkHostedCallGo(b *testing.B) {
	build(b)
	hostedCall(b, []string{bins.sdkserver}, "status", statusLine, `"requests":`)
}

// hostedCall measures ping and the tool call line (reported as name)
// through `hearth run -- server...` against server spawned directly and
// behind linerelay; every reply to line contains want.
func hostedCall(b *testing.B, server []string, name, line, want string) {
	_, runtime := startSocketDaemonIn(b)
	hosted, _, _ := hostedRun(b, runtime, server...)
	direct, _ := directRun(b, server...)
	relay := relayRun(b, server...)
	all := []*conn{hosted, direct, relay}
	warm(b, 300, all, pingLine, line)
	for _, c := range all {
		if c.roundTrip(b, line); !strings.Contains(string(c.reply()), want) {
			b.Fatalf("%s: %.300s", name, c.reply())
		}
	}
	b.ResetTimer()
	ping := interleave(rounds, perRound(b), block, contender{"hosted", rt(b, hosted, pingLine)}, contender{"direct", rt(b, direct, pingLine)})
	dpid := daemonPID(b, runtime)
	before := costOf(dpid)
	call := interleave(rounds, perRound(b), block, contender{"hosted", rt(b, hosted, line)}, contender{"direct", rt(b, direct, line)},
		contender{"relay", rt(b, relay, line)})
	after := costOf(dpid)
	b.StopTimer()
	// The daemon is idle but for the hosted calls: what they cost it.
	calls := float64(rounds * perRound(b))
	b.ReportMetric(float64(after.switches-before.switches)/calls, name+"-daemon-switches/call")
	b.ReportMetric(float64((after.cpu-before.cpu).Microseconds())/calls, name+"-daemon-cpu-µs/call")
	roundQuantiles(b, "ping-hosted-", ping[0])
	roundQuantiles(b, "ping-direct-", ping[1])
	roundQuantiles(b, name+"-hosted-", call[0])
	roundQuantiles(b, name+"-direct-", call[1])
	roundQuantiles(b, name+"-relay-", call[2])
	roundRatio(b, name+"-hosted-over-direct", call[0], call[1])
	roundDelta(b, name+"-hosted-minus-direct", call[0], call[1])
	roundDelta(b, name+"-relay-minus-direct", call[2], call[1])
}
