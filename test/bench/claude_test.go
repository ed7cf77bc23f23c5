//go:build unix

package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// claudeCLI is the Claude Code CLI test/ts pins longest (npm ci there),
// the one the figures of docs/development.md were measured with
// (node_modules/.bin/claude may be either CLI test/ts installs).
func claudeCLI(b *testing.B) string {
	b.Helper()
	p, _ := filepath.Abs(filepath.Join("..", "ts", "node_modules", "@anthropic-ai", "claude-code", "bin", "claude.exe"))
	if out, err := exec.Command(p, "--version").Output(); err != nil || !strings.Contains(string(out), "Claude Code") {
		b.Skip("the Claude Code CLI is missing (npm ci in test/ts)")
	}
	return p
}

// claudeSide is one side of BenchmarkClaudeCodeHosting: a HOME whose
// ~/.claude.json lists the servers, and the environment `claude` runs in.
type claudeSide struct {
	home, project string
	env           []string
}

// newClaudeSide writes servers as the user servers of a fresh HOME.
func newClaudeSide(b *testing.B, servers map[string]any, extraEnv ...string) claudeSide {
	s := claudeSide{home: b.TempDir()}
	s.project = filepath.Join(s.home, "project")
	os.MkdirAll(s.project, 0o755)
	cfg, _ := json.MarshalIndent(map[string]any{"numStartups": 3, "mcpServers": servers}, "", "  ")
	if err := os.WriteFile(filepath.Join(s.home, ".claude.json"), cfg, 0o600); err != nil {
		b.Fatal(err)
	}
	node, _ := exec.LookPath("node")
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "HOME", name == "PATH", strings.HasPrefix(name, "CLAUDE"), strings.HasPrefix(name, "ANTHROPIC_"),
			strings.HasPrefix(name, "HEARTH_"), strings.HasPrefix(name, "MCP_"), strings.HasPrefix(name, "XDG_"):
			continue
		}
		s.env = append(s.env, kv)
	}
	s.env = append(s.env, "HOME="+s.home, "PATH="+filepath.Dir(bins.hearth)+":"+filepath.Dir(node)+":/usr/bin:/bin",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	s.env = append(s.env, extraEnv...)
	return s
}

// hasLine reports whether a line of s starts with prefix and ends with suffix.
func hasLine(s, prefix, suffix string) bool {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) && strings.HasSuffix(l, suffix) {
			return true
		}
	}
	return false
}

// procInfo is what one /proc walk tells of a process.
type procInfo struct {
	ppid int
	argv []string
}

// procs is every live process, by pid.
type procs map[int]procInfo

func procTable() procs {
	t := procs{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		t[pid] = procInfo{ppid, strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")}
	}
	return t
}

// descends reports whether pid is one of roots or below one of them.
func (t procs) descends(pid int, roots []int) bool {
	for seen := 0; pid > 1 && seen < 64; seen++ {
		if slices.Contains(roots, pid) {
			return true
		}
		pid = t[pid].ppid
	}
	return false
}

// runsScript reports whether argv is node running one of scripts (not a
// shim or a keeper naming it in its arguments).
func runsScript(argv []string, scripts []string) bool {
	if len(argv) < 2 || filepath.Base(argv[0]) != "node" {
		return false
	}
	return slices.Contains(scripts, argv[1])
}

// claudeSample is one look at the processes of a side.
type claudeSample struct {
	servers, serverPSS int // node processes running the servers' scripts
	overheadPSS        int // hearth's other processes: shims, keepers, the daemon's growth
	pids               []int
}

// sampleSide finds the server processes below roots (the claude
// processes, and for hearth its daemon), and hearth's own processes there.
func sampleSide(roots []int, scripts []string, daemon, daemonBase int) claudeSample {
	t := procTable()
	var s claudeSample
	for pid, p := range t {
		if !t.descends(pid, roots) || slices.Contains(roots, pid) {
			continue
		}
		v, _ := pss(pid)
		switch {
		case runsScript(p.argv, scripts):
			s.servers++
			s.serverPSS += v
			s.pids = append(s.pids, pid)
		case daemon > 0 && (filepath.Base(p.argv[0]) == "hearth" || slices.Contains(p.argv, "hearth-keeper")):
			s.overheadPSS += v // a shim, or an upstream's keeper (sh -c ... hearth-keeper node ...)
		}
	}
	if daemon > 0 {
		v, _ := pss(daemon)
		s.overheadPSS += max(v-daemonBase, 0)
	}
	return s
}

// tenServers are the ten stdio servers of the Claude Code benchmarks as
// ~/.claude.json entries (server-memory on four files, server-filesystem on
// four directories, server-everything twice), their names in order, and
// the scripts their processes run.
func tenServers(b *testing.B) (servers map[string]any, names, scripts []string) {
	_, everything := everything(b)
	mod := filepath.Dir(filepath.Dir(filepath.Dir(everything)))
	memory := filepath.Join(mod, "server-memory", "dist", "index.js")
	filesystem := filepath.Join(mod, "server-filesystem", "dist", "index.js")
	scripts = []string{everything, memory, filesystem}
	data := b.TempDir()
	servers = map[string]any{
		"everything":  map[string]any{"type": "stdio", "command": "node", "args": []string{everything}},
		"everything2": map[string]any{"type": "stdio", "command": "node", "args": []string{everything, "stdio"}},
	}
	for i := range 4 {
		dir := filepath.Join(data, "files", strconv.Itoa(i))
		os.MkdirAll(dir, 0o755)
		servers[fmt.Sprintf("memory%d", i)] = map[string]any{"type": "stdio", "command": "node", "args": []string{memory},
			"env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(data, fmt.Sprintf("memory%d.jsonl", i))}}
		servers[fmt.Sprintf("files%d", i)] = map[string]any{"type": "stdio", "command": "node", "args": []string{filesystem, dir}}
	}
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return servers, names, scripts
}

// BenchmarkClaudeCodeHosting: `claude mcp list` (the Claude Code CLI,
// which starts every server of ~/.claude.json and checks it answers) three
// at once, with ten stdio servers (server-memory on four files,
// server-filesystem on four directories, server-everything twice), through
// `hearth run` as `hearthd adopt --write` writes them against the same
// entries spawned directly; three rounds, the sides alternating. Reported:
// the servers' processes and PSS at the peak while the three run and once
// they have ended (hearth's shims, keepers and the daemon's growth apart),
// and how long the hosted servers stayed after. Goal: ten upstreams against
// thirty; none left by direct, the ten idle ones by hearth, stopped at
// their idle timeout (1 minute by default: the benchmark waits for it).
func BenchmarkClaudeCodeHosting(b *testing.B) {
	claude := claudeCLI(b)
	servers, names, scripts := tenServers(b)

	_, runtime := startSocketDaemonIn(b)
	dpid := daemonPID(b, runtime)
	direct := newClaudeSide(b, servers)
	hearth := newClaudeSide(b, servers, "XDG_RUNTIME_DIR="+runtime, "HEARTH_HOME="+filepath.Join(runtime, "home"), "HEARTH_NO_AUTOSTART=1")
	adopt := exec.Command(bins.hearthd, "adopt", "--write")
	adopt.Env = hearth.env
	if out, err := adopt.CombinedOutput(); err != nil || !strings.Contains(string(out), "Wrote ") {
		b.Fatalf("hearthd adopt --write: %v\n%s", err, out)
	}
	daemonBase, _ := pss(dpid)

	type round struct{ peak, left claudeSample }
	// run starts three `claude mcp list` at once on side s and samples its
	// processes until they end, then once its processes have settled.
	run := func(s claudeSide, daemon int) round {
		var r round
		var cmds []int
		var wg sync.WaitGroup
		started := make(chan int, 3)
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(claude, "mcp", "list")
				cmd.Dir, cmd.Env = s.project, s.env
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				if err := cmd.Start(); err != nil {
					b.Error(err)
					started <- 0
					return
				}
				started <- cmd.Process.Pid
				if err := cmd.Wait(); err != nil {
					b.Errorf("claude mcp list: %v\n%s", err, out.String())
				}
				for _, n := range names {
					if !hasLine(out.String(), n+": ", " - ✔ Connected") {
						b.Errorf("claude mcp list: %s is not connected\n%s", n, out.String())
					}
				}
			}()
		}
		for range 3 {
			cmds = append(cmds, <-started)
		}
		roots := cmds
		if daemon > 0 {
			roots = append(slices.Clone(cmds), daemon)
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		seen := map[int]bool{}
		for running := true; running; {
			select {
			case <-done:
				running = false
			case <-time.After(20 * time.Millisecond):
			}
			s := sampleSide(roots, scripts, daemon, daemonBase)
			for _, p := range s.pids {
				seen[p] = true
			}
			if s.servers > r.peak.servers || s.serverPSS > r.peak.serverPSS {
				r.peak.servers = max(r.peak.servers, s.servers)
				r.peak.serverPSS = max(r.peak.serverPSS, s.serverPSS)
			}
			r.peak.overheadPSS = max(r.peak.overheadPSS, s.overheadPSS)
		}
		// Left: the server processes seen that still run once every one
		// started directly has gone, or 5 s after the clients ended (a
		// direct server outliving its client is left over).
		alive := func() []int {
			var out []int
			for p := range seen {
				if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p)); err == nil && runsScript(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), scripts) {
					out = append(out, p)
				}
			}
			return out
		}
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if daemon > 0 {
				break // hearth's upstreams stay, idle; its shims ended with the clients
			}
			if len(alive()) == 0 {
				break
			}
		}
		for _, p := range alive() {
			v, _ := pss(p)
			r.left.servers++
			r.left.serverPSS += v
		}
		if daemon > 0 {
			r.left.overheadPSS = sampleSide([]int{daemon}, scripts, daemon, daemonBase).overheadPSS
		}
		return r
	}

	b.ResetTimer()
	var hr, dr []round
	var hearthEnded time.Time
	for i := range 3 {
		if i%2 == 0 {
			hr = append(hr, run(hearth, dpid))
			hearthEnded = time.Now()
			dr = append(dr, run(direct, 0))
		} else {
			dr = append(dr, run(direct, 0))
			hr = append(hr, run(hearth, dpid))
			hearthEnded = time.Now()
		}
	}
	for range b.N {
	}
	b.StopTimer()

	median := func(rs []round, f func(round) int) float64 {
		v := make([]int, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		sort.Ints(v)
		return float64(v[len(v)/2])
	}
	report := func(name string, f func(round) int) {
		h, d := median(hr, f), median(dr, f)
		b.ReportMetric(h, "hearth-"+name)
		b.ReportMetric(d, "direct-"+name)
		if d > 0 {
			b.ReportMetric(h/d, "hearth-over-direct-"+name)
		}
	}
	report("peak-servers", func(r round) int { return r.peak.servers })
	report("peak-server-PSS-kB", func(r round) int { return r.peak.serverPSS })
	report("left-servers", func(r round) int { return r.left.servers })
	report("left-server-PSS-kB", func(r round) int { return r.left.serverPSS })
	b.ReportMetric(median(hr, func(r round) int { return r.peak.overheadPSS }), "hearth-peak-overhead-PSS-kB")
	b.ReportMetric(median(hr, func(r round) int { return r.left.overheadPSS }), "hearth-left-overhead-PSS-kB")
	peakTotal := median(hr, func(r round) int { return r.peak.serverPSS + r.peak.overheadPSS })
	b.ReportMetric(peakTotal/median(dr, func(r round) int { return r.peak.serverPSS }), "hearth-with-overhead-over-direct-peak-PSS")

	// The idle upstreams stop at their idle timeout (a minute without a
	// client): wait for it, and report when they went.
	for deadline := hearthEnded.Add(6 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		if sampleSide([]int{dpid}, scripts, 0, 0).servers == 0 {
			break
		}
	}
	b.ReportMetric(float64(sampleSide([]int{dpid}, scripts, 0, 0).servers), "hearth-servers-after-idle-timeout")
	b.ReportMetric(time.Since(hearthEnded).Seconds(), "hearth-idle-stop-s")
}
