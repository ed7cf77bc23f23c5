package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// catalogDaemon is a socket hearthd in a fixed runtime directory whose HOME
// is the hearth side's, so that its catalog (~/.local/state/hearth/catalog)
// outlives each process: restart gives a cold daemon, no upstream running,
// with the catalog the previous ones wrote.
type catalogDaemon struct {
	b            *testing.B
	env          []string
	runtime, dir string
	cmd          *exec.Cmd
}

func (d *catalogDaemon) start() int {
	d.b.Helper()
	ready := filepath.Join(d.runtime, "hearth", "hearthd.ready")
	os.Remove(ready)
	d.cmd = exec.Command(bins.hearthd, "serve")
	d.cmd.Env = d.env
	if err := d.cmd.Start(); err != nil {
		d.b.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			return d.cmd.Process.Pid
		}
		if time.Now().After(deadline) {
			d.b.Fatal("hearthd not ready")
		}
	}
}

func (d *catalogDaemon) stop() {
	if d.cmd != nil {
		d.cmd.Process.Signal(syscall.SIGTERM)
		d.cmd.Wait()
		d.cmd = nil
	}
}

// serversOf lists the live processes running one of scripts with HOME=home
// in their environment (a side's servers, however they were started).
func serversOf(home string, scripts []string) []int {
	var pids []int
	for pid, p := range procTable() {
		if !runsScript(p.argv, scripts) {
			continue
		}
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if slices.Contains(strings.Split(string(env), "\x00"), "HOME="+home) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// BenchmarkClaudeCodeCatalog: ten stdio servers (tenServers) in a
// ~/.claude.json, through `hearth run` as `hearthd adopt --write` writes
// them against the same entries spawned directly, after one run through
// hearth has filled its catalog (decision 0045).
//
//   - list: `claude mcp list` one at a time, rounds alternating the sides;
//     before each hearth round its daemon is restarted (not timed): a cold
//     daemon with a warm catalog. Reported: the median wall time of each
//     side (with the spread of their ratio over the rounds) and the server
//     processes seen during and after each run. Goals: hearth at least 20×
//     faster, and no server process started.
//   - session: a Go SDK client per server, as a client session does at its
//     start (initialize and tools/list on each of the ten), then one tool
//     call on one of them (server-everything's echo); then the server
//     processes and their PSS, and hearth's overhead (its shims, keepers and
//     the daemon's growth). Goal: one upstream, not ten.
func BenchmarkClaudeCodeCatalog(b *testing.B) {
	claude := claudeCLI(b)
	build(b)
	servers, names, scripts := tenServers(b)
	runtime, err := os.MkdirTemp("", "hb")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(runtime) })
	direct := newClaudeSide(b, servers)
	hearth := newClaudeSide(b, servers, "XDG_RUNTIME_DIR="+runtime, "HEARTH_HOME="+filepath.Join(runtime, "home"), "HEARTH_NO_AUTOSTART=1")
	d := &catalogDaemon{b: b, runtime: runtime, env: append(os.Environ(), "HOME="+hearth.home, "XDG_RUNTIME_DIR="+runtime,
		"HEARTH_HOME="+filepath.Join(runtime, "home"), "MCP_SOCKET_PATH="+filepath.Join(runtime, "hearth", "hearthd.sock"),
		"MCP_READY_FILE=", "HEARTH_LOG_LEVEL=warn")}
	b.Cleanup(d.stop)
	adopt := exec.Command(bins.hearthd, "adopt", "--write")
	adopt.Env = hearth.env
	if out, err := adopt.CombinedOutput(); err != nil || !strings.Contains(string(out), "Wrote ") {
		b.Fatalf("hearthd adopt --write: %v\n%s", err, out)
	}

	// list runs `claude mcp list` on side s, checks that every server is
	// connected, and returns its wall time and the server processes of s
	// seen while it ran and once it had ended.
	list := func(s claudeSide) (time.Duration, int) {
		cmd := exec.Command(claude, "mcp", "list")
		cmd.Dir, cmd.Env = s.project, s.env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		seen := map[int]bool{}
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var elapsed time.Duration
		for running := true; running; {
			select {
			case err := <-done:
				elapsed = time.Since(t0)
				if err != nil {
					b.Fatalf("claude mcp list: %v\n%s", err, out.String())
				}
				running = false
			case <-time.After(10 * time.Millisecond):
			}
			for _, p := range serversOf(s.home, scripts) {
				seen[p] = true
			}
		}
		for _, n := range names {
			if !hasLine(out.String(), n+": ", " - ✔ Connected") {
				b.Fatalf("claude mcp list: %s is not connected\n%s", n, out.String())
			}
		}
		return elapsed, len(seen)
	}
	// waitGone waits for the servers of side s to end.
	waitGone := func(s claudeSide) {
		for deadline := time.Now().Add(20 * time.Second); len(serversOf(s.home, scripts)) > 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatalf("servers still run: %v", serversOf(s.home, scripts))
			}
		}
	}

	// Fill the catalog: one run through hearth starts the ten and records
	// their answers; then a warm-up run of the direct side.
	d.start()
	if _, n := list(hearth); n != len(names) {
		b.Fatalf("the first run through hearth started %d servers, want %d", n, len(names))
	}
	for deadline := time.Now().Add(30 * time.Second); catalogued(b, hearth.env) < len(names); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d servers catalogued", catalogued(b, hearth.env), len(names))
		}
	}
	d.stop()
	waitGone(hearth)
	list(direct)
	waitGone(direct)

	b.ResetTimer()
	const rounds = 6
	var ht, dt []time.Duration
	var hs, ds []int
	for i := range rounds {
		sides := []bool{true, false}
		if i%2 == 1 {
			sides = []bool{false, true}
		}
		for _, viaHearth := range sides {
			if viaHearth {
				b.StopTimer()
				d.start()
				b.StartTimer()
				e, n := list(hearth)
				ht, hs = append(ht, e), append(hs, n)
				d.stop()
				waitGone(hearth)
			} else {
				e, n := list(direct)
				dt, ds = append(dt, e), append(ds, n)
				waitGone(direct)
			}
		}
	}
	for range b.N {
	}
	b.StopTimer()
	ratios := make([]float64, rounds)
	for i := range rounds {
		ratios[i] = float64(dt[i]) / float64(ht[i])
	}
	medianDur := func(v []time.Duration) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return float64(v[len(v)/2]) / float64(time.Millisecond)
	}
	b.ReportMetric(medianDur(ht), "hearth-list-ms")
	b.ReportMetric(medianDur(dt), "direct-list-ms")
	reportSpread(b, "direct-over-hearth-list-x", spreadOf(ratios))
	b.ReportMetric(float64(slices.Max(hs)), "hearth-list-servers-started-max")
	b.ReportMetric(float64(slices.Min(ds)), "direct-list-servers-started-min")
	b.Logf("claude mcp list, ms: hearth %v, direct %v", ht, dt)

	// A client session: the ten connected and listed, one tool called.
	entries := claudeEntries(b, hearth.home)
	type sessionSample struct{ servers, serverPSS, overheadPSS int }
	session := func(s claudeSide, viaHearth bool) sessionSample {
		var dpid, daemonBase int
		if viaHearth {
			dpid = d.start()
			daemonBase, _ = pss(dpid)
		}
		// The clients run in a process whose environment is the side's,
		// as a client's is: `hearth run` tells the variables its entry set
		// from its client's by comparing the two (decision 0036).
		var spec sessionSpec
		for _, n := range names {
			e := entries[n]
			if !viaHearth {
				e = directEntry(servers[n])
			}
			spec.Entries = append(spec.Entries, e)
		}
		spec.Call = slices.Index(names, "everything")
		raw, _ := json.Marshal(spec)
		client := exec.Command(os.Args[0], "-test.run=^TestCatalogSessionClient$", "-test.v")
		client.Dir, client.Env = s.project, append(slices.Clone(s.env), "BENCH_SESSION="+string(raw))
		in, _ := client.StdinPipe()
		stdout, _ := client.StdoutPipe()
		var stderr bytes.Buffer
		client.Stderr = &stderr
		if err := client.Start(); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		var log strings.Builder
		for sc.Scan() && sc.Text() != "ready" {
			log.WriteString(sc.Text() + "\n")
		}
		if sc.Err() != nil || sc.Text() != "ready" {
			client.Wait()
			b.Fatalf("session client:\n%s%s", log.String(), stderr.String())
		}
		var out sessionSample
		for _, p := range serversOf(s.home, scripts) {
			v, _ := pss(p)
			out.servers++
			out.serverPSS += v
		}
		if viaHearth {
			out.overheadPSS = sampleSide([]int{dpid}, scripts, dpid, daemonBase).overheadPSS
			t := procTable()
			for pid, p := range t {
				if t.descends(pid, []int{client.Process.Pid}) && filepath.Base(p.argv[0]) == "hearth" {
					v, _ := pss(pid)
					out.overheadPSS += v // a shim
				}
			}
		}
		in.Close()
		if err := client.Wait(); err != nil {
			b.Fatalf("session client: %v\n%s", err, stderr.String())
		}
		if viaHearth {
			d.stop()
		}
		waitGone(s)
		return out
	}
	var hss, dss []sessionSample
	for i := range 2 {
		if i%2 == 0 {
			hss = append(hss, session(hearth, true))
			dss = append(dss, session(direct, false))
		} else {
			dss = append(dss, session(direct, false))
			hss = append(hss, session(hearth, true))
		}
	}
	mean := func(v []sessionSample, f func(sessionSample) int) float64 {
		sum := 0
		for _, s := range v {
			sum += f(s)
		}
		return float64(sum) / float64(len(v))
	}
	hServers, dServers := mean(hss, func(s sessionSample) int { return s.servers }), mean(dss, func(s sessionSample) int { return s.servers })
	hPSS, dPSS := mean(hss, func(s sessionSample) int { return s.serverPSS }), mean(dss, func(s sessionSample) int { return s.serverPSS })
	over := mean(hss, func(s sessionSample) int { return s.overheadPSS })
	b.ReportMetric(hServers, "hearth-session-servers")
	b.ReportMetric(dServers, "direct-session-servers")
	b.ReportMetric(hPSS, "hearth-session-server-PSS-kB")
	b.ReportMetric(dPSS, "direct-session-server-PSS-kB")
	b.ReportMetric(over, "hearth-session-overhead-PSS-kB")
	b.ReportMetric((hPSS+over)/dPSS, "hearth-with-overhead-over-direct-session-PSS")
}

// claudeEntry is one stdio server of a ~/.claude.json.
type claudeEntry struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// claudeEntries reads the servers of home's ~/.claude.json.
func claudeEntries(b *testing.B, home string) map[string]claudeEntry {
	raw, err := os.ReadFile(filepath.Join(home, ".claude.json"))
	if err != nil {
		b.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]claudeEntry `json:"mcpServers"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		b.Fatal(err)
	}
	return cfg.MCPServers
}

// directEntry is one of tenServers' entries as a claudeEntry.
func directEntry(v any) claudeEntry {
	raw, _ := json.Marshal(v)
	var e claudeEntry
	json.Unmarshal(raw, &e)
	return e
}

// catalogued counts the hosted servers whose catalog lists tools.
func catalogued(b *testing.B, env []string) int {
	cmd := exec.Command(bins.hearthd, "status", "--json")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("hearthd status --json: %v\n%s", err, out)
	}
	var st struct {
		Hosted []struct {
			Catalog *struct{ Tools int }
		}
	}
	if err := json.Unmarshal(out, &st); err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, h := range st.Hosted {
		if h.Catalog != nil && h.Catalog.Tools > 0 {
			n++
		}
	}
	return n
}

// sessionSpec is what TestCatalogSessionClient connects to and calls.
type sessionSpec struct {
	Entries []claudeEntry
	Call    int // the entry whose echo tool is called
}

// TestCatalogSessionClient is BenchmarkClaudeCodeCatalog's client session,
// in a process of its own: a Go SDK client per entry of BENCH_SESSION
// (initialize and tools/list), one call of echo, then "ready" on stdout;
// the sessions close when stdin does.
func TestCatalogSessionClient(t *testing.T) {
	raw := os.Getenv("BENCH_SESSION")
	if raw == "" {
		t.Skip("run by BenchmarkClaudeCodeCatalog")
	}
	var spec sessionSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var sessions []*mcp.ClientSession
	for _, e := range spec.Entries {
		cmd := exec.Command(e.Command, e.Args...)
		cmd.Env = os.Environ()
		for k, v := range e.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-session", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connect %v: %v", cmd.Args, err)
		}
		defer cs.Close()
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("tools/list %v: %v", cmd.Args, err)
		}
		sessions = append(sessions, cs)
	}
	res, err := sessions[spec.Call].CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	fmt.Println("ready")
	io.ReadAll(os.Stdin)
}
