//go:build unix

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
	b       *testing.B
	env     []string
	runtime string
	cmd     *exec.Cmd
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
	return withHome(home, func(argv []string) bool { return runsScript(argv, scripts) })
}

// withHome lists the live processes whose command line runs says they are
// of interest and whose environment holds HOME=home.
func withHome(home string, runs func(argv []string) bool) []int {
	var pids []int
	for pid, p := range procTable() {
		if !runs(p.argv) {
			continue
		}
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if slices.Contains(strings.Split(string(env), "\x00"), "HOME="+home) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitServersGone waits for the servers a side (its HOME) runs to end.
func waitServersGone(b *testing.B, home string, scripts []string) {
	b.Helper()
	for deadline := time.Now().Add(20 * time.Second); len(serversOf(home, scripts)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("servers still run: %v", serversOf(home, scripts))
		}
	}
}

// catalogSetup is what the catalog benchmarks share: tenServers in the
// ~/.claude.json of two sides, the hearth side's rewritten by `hearthd
// adopt --write` to run them through `hearth run`, its daemon's places
// (XDG_RUNTIME_DIR, HEARTH_HOME) under runtime.
type catalogSetup struct {
	servers        map[string]any
	names, scripts []string
	runtime        string
	direct, hearth claudeSide
}

// newCatalogSetup builds the binaries and both sides; hearthEnv is added to
// the hearth side's environment.
func newCatalogSetup(b *testing.B, hearthEnv ...string) catalogSetup {
	build(b)
	var c catalogSetup
	c.servers, c.names, c.scripts = tenServers(b)
	runtime, err := os.MkdirTemp("", "hb")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(runtime) })
	c.runtime = runtime
	c.direct = newClaudeSide(b, c.servers)
	c.hearth = newClaudeSide(b, c.servers, append([]string{"XDG_RUNTIME_DIR=" + runtime, "HEARTH_HOME=" + filepath.Join(runtime, "home")}, hearthEnv...)...)
	adopt := exec.Command(bins.hearthd, "adopt", "--write")
	adopt.Env = c.hearth.env
	if out, err := adopt.CombinedOutput(); err != nil || !strings.Contains(string(out), "Wrote ") {
		b.Fatalf("hearthd adopt --write: %v\n%s", err, out)
	}
	return c
}

// lowerBound is the catalog benchmarks' lower bound of any way to serve
// the client: for each of names, a catalogserver answering from memory
// with the bytes of one of the entries hearth catalogued under home (the
// smallest stdio server there could be, one per server a client starts).
func lowerBound(b *testing.B, home string, names []string) map[string]claudeEntry {
	entries, _ := filepath.Glob(filepath.Join(home, ".local", "state", "hearth", "catalog", "*.json"))
	if len(entries) != len(names) {
		b.Fatalf("%d catalog entries, want %d: %v", len(entries), len(names), entries)
	}
	out := map[string]claudeEntry{}
	for i, e := range entries {
		out[names[i]] = claudeEntry{Command: bins.catalogserver, Args: []string{e}}
	}
	return out
}

// BenchmarkClaudeCodeCatalog: ten stdio servers (tenServers) in a
// ~/.claude.json, through `hearth run` as `hearthd adopt --write` writes
// them against the same entries spawned directly, after one run through
// hearth has filled its catalog (decision 0045).
//
//   - list: `claude mcp list` one at a time, the sides in turn each round;
//     before each hearth round its daemon is restarted (not timed): a cold
//     daemon with a warm catalog. A third side lists ten catalogservers
//     (lowerBound): Claude Code's own start and its ten spawns, the least
//     any way of serving it could take. Reported: the median wall time of
//     each side, the spread of the ratios over the rounds (direct over
//     hearth, direct over the lower bound, hearth over the lower bound),
//     and the server processes seen during and after each run. Goals:
//     hearth at least 20× faster, and no server process started.
//   - session: a Go SDK client per server, as a client session does at its
//     start (initialize and tools/list on each of the ten), then one tool
//     call on one of them (server-everything's echo); then the server
//     processes and their PSS, and hearth's overhead (its shims, keepers and
//     the daemon's growth). Goal: one upstream, not ten.
func BenchmarkClaudeCodeCatalog(b *testing.B) {
	claude := claudeCLI(b)
	cs := newCatalogSetup(b, "HEARTH_NO_AUTOSTART=1")
	servers, names, scripts, runtime, direct, hearth := cs.servers, cs.names, cs.scripts, cs.runtime, cs.direct, cs.hearth
	d := &catalogDaemon{b: b, runtime: runtime, env: append(os.Environ(), "HOME="+hearth.home, "XDG_RUNTIME_DIR="+runtime,
		"HEARTH_HOME="+filepath.Join(runtime, "home"), "MCP_SOCKET_PATH="+filepath.Join(runtime, "hearth", "hearthd.sock"),
		"MCP_READY_FILE=", "HEARTH_LOG_LEVEL=warn")}
	b.Cleanup(d.stop)

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
	waitGone := func(s claudeSide) { waitServersGone(b, s.home, scripts) }
	var floor claudeSide

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
	floorServers := map[string]any{}
	for n, e := range lowerBound(b, hearth.home, names) {
		floorServers[n] = map[string]any{"type": "stdio", "command": e.Command, "args": e.Args}
	}
	floor = newClaudeSide(b, floorServers)
	list(floor)

	b.ResetTimer()
	const rounds = 6
	var ht, dt, ft []time.Duration
	var hs, ds []int
	const viaHearth, viaDirect, viaFloor = 0, 1, 2
	for i := range rounds {
		sides := []int{viaHearth, viaDirect, viaFloor}
		sides = append(sides[i%3:], sides[:i%3]...)
		for _, side := range sides {
			switch side {
			case viaFloor:
				e, _ := list(floor)
				ft = append(ft, e)
			case viaHearth:
				b.StopTimer()
				d.start()
				b.StartTimer()
				e, n := list(hearth)
				ht, hs = append(ht, e), append(hs, n)
				d.stop()
				waitGone(hearth)
			default:
				e, n := list(direct)
				dt, ds = append(dt, e), append(ds, n)
				waitGone(direct)
			}
		}
	}
	for range b.N {
	}
	b.StopTimer()
	ratios, bound, own := make([]float64, rounds), make([]float64, rounds), make([]float64, rounds)
	for i := range rounds {
		ratios[i], bound[i], own[i] = float64(dt[i])/float64(ht[i]), float64(dt[i])/float64(ft[i]), float64(ht[i])/float64(ft[i])
	}
	medianDur := func(v []time.Duration) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return float64(v[len(v)/2]) / float64(time.Millisecond)
	}
	b.ReportMetric(medianDur(ht), "hearth-list-ms")
	b.ReportMetric(medianDur(dt), "direct-list-ms")
	b.ReportMetric(medianDur(ft), "lower-bound-list-ms")
	reportSpread(b, "direct-over-hearth-list-x", spreadOf(ratios))
	reportSpread(b, "direct-over-lower-bound-list-x", spreadOf(bound))
	reportSpread(b, "hearth-over-lower-bound-list-x", spreadOf(own))
	b.ReportMetric(float64(slices.Max(hs)), "hearth-list-servers-started-max")
	b.ReportMetric(float64(slices.Min(ds)), "direct-list-servers-started-min")
	b.Logf("claude mcp list, ms: hearth %v, direct %v, lower bound %v", ht, dt, ft)

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

// daemonsOf lists the live `hearthd serve` processes with HOME=home in their
// environment: the daemon a shim of that side autostarted.
func daemonsOf(home string) []int {
	return withHome(home, func(argv []string) bool {
		return len(argv) >= 2 && filepath.Base(argv[0]) == "hearthd" && argv[1] == "serve"
	})
}

// stopAutostarted stops the daemon side home's shims started (SIGTERM, as
// `hearthd stop` does) and waits for it and its servers to end.
func stopAutostarted(b *testing.B, home string, scripts []string) {
	b.Helper()
	for _, pid := range daemonsOf(home) {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	for deadline := time.Now().Add(20 * time.Second); len(daemonsOf(home)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("hearthd still runs: %v", daemonsOf(home))
		}
	}
	waitServersGone(b, home, scripts)
}

// connectAllResult is what test/ts/connect_all.mjs prints.
type connectAllResult struct {
	TotalMs float64
	Servers []struct {
		Name  string
		Ms    float64
		Tools int
	}
}

// BenchmarkTSClientCatalog: BenchmarkClaudeCodeCatalog's ten servers and
// warm catalog with a client that starts fast: the TypeScript SDK v1 client
// (test/ts/connect_all.mjs) connects to the ten at once, as a client
// starting up does, and runs tools/list on each; timed from its first
// connect to its last list, the node process's own start left out. Through
// hearth each round begins with no daemon at all: the first shim autostarts
// it (its start is in the time) and it answers from the catalog that one
// run before the rounds filled. Against the same entries spawned directly,
// and against the lower bound of any way to serve the client: ten
// catalogservers, the smallest stdio server, each answering from memory
// with the bytes of one of the ten catalog entries (what remains is node's
// ten spawns and the client's own work); six rounds, the three sides in
// turn. Reported: the median wall time of each side, the spread of the
// ratios over the rounds (direct over hearth; direct over the lower bound,
// the most any way could reach; hearth over the lower bound, hearth's own
// share), the slowest server's median time, the server processes seen
// during each run, and (not timed with the rest) a second run through
// hearth on the daemon the first started, still with no upstream: what
// the daemon's start adds. Goals: hearth at least 20× faster, and no server
// process started through it.
func BenchmarkTSClientCatalog(b *testing.B) {
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node is missing")
	}
	script, _ := filepath.Abs(filepath.Join("..", "ts", "connect_all.mjs"))
	if _, err := os.Stat(filepath.Join("..", "ts", "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		b.Skip("test/ts/node_modules is missing (npm ci in test/ts)")
	}
	// The hearth side may autostart its daemon: its shims find none.
	cs := newCatalogSetup(b)
	names, scripts, direct, hearth := cs.names, cs.scripts, cs.direct, cs.hearth
	b.Cleanup(func() {
		for _, pid := range daemonsOf(hearth.home) {
			syscall.Kill(pid, syscall.SIGTERM)
		}
	})
	adopted := claudeEntries(b, hearth.home)
	type server struct {
		Name    string            `json:"name"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env,omitempty"`
	}
	var hearthSpec, directSpec []server
	for _, n := range names {
		h, d := adopted[n], directEntry(cs.servers[n])
		hearthSpec = append(hearthSpec, server{n, h.Command, h.Args, h.Env})
		directSpec = append(directSpec, server{n, d.Command, d.Args, d.Env})
	}
	if hearthSpec[0].Command == directSpec[0].Command {
		b.Fatalf("the hearth side's entries were not adopted: %+v", hearthSpec[0])
	}
	// connectAll runs connect_all.mjs on side s with its entries, checks
	// that every server listed tools, and returns what it measured and the
	// server processes of s seen while it ran.
	connectAll := func(s claudeSide, spec []server) (connectAllResult, int) {
		raw, _ := json.Marshal(spec)
		cmd := exec.Command(node, script)
		cmd.Dir, cmd.Env = s.project, s.env
		cmd.Stdin = bytes.NewReader(raw)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		seen := map[int]bool{}
		for running := true; running; {
			select {
			case err := <-done:
				if err != nil {
					b.Fatalf("connect_all.mjs: %v\n%s%s", err, out.String(), stderr.String())
				}
				running = false
			case <-time.After(10 * time.Millisecond):
			}
			for _, p := range serversOf(s.home, scripts) {
				seen[p] = true
			}
		}
		var r connectAllResult
		if err := json.Unmarshal(out.Bytes(), &r); err != nil || len(r.Servers) != len(names) {
			b.Fatalf("connect_all.mjs printed %q (%v)\n%s", out.String(), err, stderr.String())
		}
		for i, sv := range r.Servers {
			if sv.Name != names[i] || sv.Tools == 0 {
				b.Fatalf("connect_all.mjs: %s listed %d tools", sv.Name, sv.Tools)
			}
		}
		return r, len(seen)
	}

	// Fill the catalog: one run through hearth (which autostarts the
	// daemon) starts the ten and records their answers; then a warm-up
	// run of the direct side.
	if _, n := connectAll(hearth, hearthSpec); n != len(names) {
		b.Fatalf("the first run through hearth started %d servers, want %d", n, len(names))
	}
	for deadline := time.Now().Add(30 * time.Second); catalogued(b, hearth.env) < len(names); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d servers catalogued", catalogued(b, hearth.env), len(names))
		}
	}
	stopAutostarted(b, hearth.home, scripts)
	connectAll(direct, directSpec)
	waitServersGone(b, direct.home, scripts)
	var lower []server
	bound := lowerBound(b, hearth.home, names)
	for _, n := range names {
		lower = append(lower, server{Name: n, Command: bound[n].Command, Args: bound[n].Args})
	}
	connectAll(hearth, lower)

	b.ResetTimer()
	const rounds = 6
	var ht, dt, ft, hSlow, dSlow, hw []float64
	var hs, ds []int
	slowest := func(r connectAllResult) float64 {
		m := 0.0
		for _, s := range r.Servers {
			m = max(m, s.Ms)
		}
		return m
	}
	const viaHearth, viaDirect, viaFloor = 0, 1, 2
	for i := range rounds {
		sides := []int{viaHearth, viaDirect, viaFloor}
		sides = append(sides[i%3:], sides[:i%3]...)
		for _, side := range sides {
			switch side {
			case viaFloor:
				r, _ := connectAll(hearth, lower)
				ft = append(ft, r.TotalMs)
			case viaHearth:
				if pids := daemonsOf(hearth.home); len(pids) > 0 {
					b.Fatalf("a daemon runs before a hearth round: %v", pids)
				}
				r, n := connectAll(hearth, hearthSpec)
				ht, hSlow, hs = append(ht, r.TotalMs), append(hSlow, slowest(r)), append(hs, n)
				b.StopTimer()
				// Once more on the daemon just started (still no upstream):
				// what the daemon's start costs in the time above.
				r, n = connectAll(hearth, hearthSpec)
				hw, hs = append(hw, r.TotalMs), append(hs, n)
				stopAutostarted(b, hearth.home, scripts)
				b.StartTimer()
			default:
				r, n := connectAll(direct, directSpec)
				dt, dSlow, ds = append(dt, r.TotalMs), append(dSlow, slowest(r)), append(ds, n)
				waitServersGone(b, direct.home, scripts)
			}
		}
	}
	for range b.N {
	}
	b.StopTimer()
	ratios, overBound, own := make([]float64, rounds), make([]float64, rounds), make([]float64, rounds)
	for i := range rounds {
		ratios[i], overBound[i], own[i] = dt[i]/ht[i], dt[i]/ft[i], ht[i]/ft[i]
	}
	median := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	b.ReportMetric(median(ht), "hearth-connect-all-ms")
	b.ReportMetric(median(dt), "direct-connect-all-ms")
	b.ReportMetric(median(ft), "lower-bound-connect-all-ms")
	b.ReportMetric(median(hw), "hearth-running-daemon-connect-all-ms")
	b.ReportMetric(median(hSlow), "hearth-slowest-server-ms")
	b.ReportMetric(median(dSlow), "direct-slowest-server-ms")
	reportSpread(b, "direct-over-hearth-x", spreadOf(ratios))
	reportSpread(b, "direct-over-lower-bound-x", spreadOf(overBound))
	reportSpread(b, "hearth-over-lower-bound-x", spreadOf(own))
	b.ReportMetric(float64(slices.Max(hs)), "hearth-servers-started-max")
	b.ReportMetric(float64(slices.Min(ds)), "direct-servers-started-min")
	b.Logf("connect + tools/list of ten, ms: hearth %.0f (then on the running daemon %.0f), direct %.0f, lower bound %.0f", ht, hw, dt, ft)
}
