//go:build linux

package supervisor

import (
	"github.com/hearth-mcp/hearth/pkg/portable"

	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testDaemonEnv runs the test binary as a daemon that starts one kept
// upstream, the shell command the variable holds, says "started" once the
// upstream did, and waits to be killed.
const testDaemonEnv = "SUPERVISOR_TEST_DAEMON"

// testHandOverEnv makes the test daemon hand its upstream over and exit.
const testHandOverEnv = "SUPERVISOR_TEST_HANDOVER"

func testDaemon() int {
	exe, _ := os.Executable()
	// A main of the daemon's kind: it reads the portability switches.
	s := New(Options{KeeperPath: exe, PortableKeeper: portable.Read(os.Getenv).Keeper})
	p, err := s.Start(ProcessSpec{Path: "/bin/sh", Args: []string{"-c", os.Getenv(testDaemonEnv)}, Keeper: true, Stderr: os.Stderr})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	line, _ := bufio.NewReader(p.Stdout).ReadString('\n')
	if os.Getenv(testHandOverEnv) != "" {
		// Hand the upstream to a successor (a sleep holding the death
		// socket's end, started with it) and exit, as a daemon handing
		// over does.
		h, err := p.Release()
		if err != nil {
			fmt.Println(err)
			return 1
		}
		heir := exec.Command("/bin/sleep", "300")
		heir.ExtraFiles = []*os.File{h.Death}
		if err := heir.Start(); err != nil {
			fmt.Println(err)
			return 1
		}
		fmt.Printf("%d %s", heir.Process.Pid, line)
		return 0
	}
	fmt.Print(line)
	select {}
}

// escaping is an upstream whose descendants leave its process group, each
// a sleep of a duration no other process on the machine sleeps, by which
// the test finds it (marks, in this order): one calls setsid and its parent,
// the upstream, lives on; one is double-forked into a new session at once
// (as a daemonizing child, or node's spawn({detached: true}) whose parent
// exits, does); one is started in a new session by a parent that exits a
// little later, which orphans it then (awaitOrphaned).
func escaping(t *testing.T) (script string, marks []string) {
	base := 600000 + os.Getpid()%100000*10 + int(time.Now().UnixNano()%7)
	marks = []string{strconv.Itoa(base), strconv.Itoa(base + 1), strconv.Itoa(base + 2)}
	script = fmt.Sprintf(`setsid sleep %s >/dev/null 2>&1 </dev/null &
(setsid sh -c 'sleep %s & exit' &) 
(setsid sh -c 'sleep %s & sleep 0.3' & sleep 0.3) &
echo started
exec sleep 300`, marks[0], marks[1], marks[2])
	t.Cleanup(func() { // what a failed or tracked run left
		for _, m := range marks {
			for _, pid := range sleepers(m) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return script, marks
}

// tracked: the keeper finds descendants with its tracker (the portable
// mode), not as a subreaper. Its tracker cannot see a process orphaned
// between two reads of the process table, so the double fork at once
// (marks[1]) may escape it (docs/decisions/0049-descendant-tracker.md):
// ended reports the marks that must end.
func ended(marks []string, tracked bool) []string {
	if tracked {
		return []string{marks[0], marks[2]}
	}
	return marks
}

// awaitOrphaned waits until the sleeper of mark has lost its parent and
// checks who took it: the keeper as the subreaper, or, when the keeper
// tracks, a reaper that is no keeper (init) -- which tells which mechanism
// runs, and that the tracker keeps a process reparented away from it.
func awaitOrphaned(t *testing.T, mark string, tracked bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pids := sleepers(mark); len(pids) == 1 {
			stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pids[0]))
			s := string(stat)
			if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 1 {
				comm, _ := os.ReadFile("/proc/" + f[1] + "/comm")
				switch c := strings.TrimSpace(string(comm)); {
				case c == "sh" || c == "sleep" || c == "":
				case tracked == (c == "hearth-keeper"):
					t.Fatalf("the orphan %s went to %s (pid %s): tracked %v", mark, c, f[1], tracked)
				default:
					t.Logf("the orphan %s went to %s (pid %s)", mark, c, f[1])
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sleeper %s was never orphaned", mark)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// awaitEnd waits until every descendant that must end did (ended), and
// reports the double-forked one if the tracker let it escape (escaping's
// cleanup kills it).
func awaitEnd(t *testing.T, marks []string, tracked bool, after string) {
	t.Helper()
	awaitNoEscapees(t, ended(marks, tracked), after)
	if left := sleepers(marks[1]); len(left) > 0 {
		t.Logf("the tracker did not see the double fork at once, as it may not: %v", left)
	}
}

// sleepers lists the live processes that sleep for mark seconds.
func sleepers(mark string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Equal(cmd, []byte("sleep\x00"+mark+"\x00")) {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		s := string(stat)
		if i := strings.LastIndexByte(s, ')'); i > 0 && len(s) > i+2 && (s[i+2] == 'Z' || s[i+2] == 'X') {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// awaitEscapees waits until each mark's sleeper is running, so that a test
// of their end is not one of their absence.
func awaitEscapees(t *testing.T, marks []string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, m := range marks {
		for len(sleepers(m)) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("the escaping sleeper %s never ran", m)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// awaitNoEscapees waits, up to a bound no healthy run approaches, until no
// sleeper of marks is alive; it kills the survivors it reports.
func awaitNoEscapees(t *testing.T, marks []string, after string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var alive []int
		for _, m := range marks {
			alive = append(alive, sleepers(m)...)
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range alive {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("descendants alive after %s: %v", after, alive)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// keeperModes are the keeper's two ways (Options.PortableKeeper), and the
// switch that selects each in a test daemon's environment.
var keeperModes = []struct {
	name     string
	portable bool
	env      string
}{{"native", false, portable.KeeperEnv + "=0"}, {"portable", true, portable.KeeperEnv + "=1"}}

// daemonEnv is a test daemon's environment: this one's without the
// switches, which mode's replace.
func daemonEnv(env string, extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != portable.Env && name != portable.KeeperEnv {
			out = append(out, kv)
		}
	}
	return append(append(out, env), extra...)
}

// Every descendant of a kept upstream ends with it, whatever session it
// moved to: when it is stopped, when it exits, and when the daemon is
// killed with SIGKILL, with either way of learning of the daemon's death
// and either way of finding descendants (native: the subreaper; portable:
// the tracker, which may miss a double fork at once).
func TestKeeperEndsEveryDescendant(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range keeperModes {
		t.Run(mode.name, func(t *testing.T) {
			tracked := mode.portable
			t.Run("stop", func(t *testing.T) {
				script, marks := escaping(t)
				s := New(Options{KeeperPath: exe, Grace: 200 * time.Millisecond, PortableKeeper: mode.portable})
				p, err := s.Start(ProcessSpec{Path: "/bin/sh", Args: []string{"-c", script}, Keeper: true})
				if err != nil {
					t.Fatal(err)
				}
				if line, _ := bufio.NewReader(p.Stdout).ReadString('\n'); line != "started\n" {
					t.Fatalf("read %q", line)
				}
				awaitEscapees(t, marks)
				awaitOrphaned(t, marks[2], tracked)
				p.Stop()
				awaitEnd(t, marks, tracked, "Stop")
			})
			t.Run("exit", func(t *testing.T) {
				script, marks := escaping(t)
				script = strings.Replace(script, "exec sleep 300", "read line; exit 3", 1)
				s := New(Options{KeeperPath: exe, PortableKeeper: mode.portable})
				p, err := s.Start(ProcessSpec{Path: "/bin/sh", Args: []string{"-c", script}, Keeper: true})
				if err != nil {
					t.Fatal(err)
				}
				awaitEscapees(t, marks)
				awaitOrphaned(t, marks[2], tracked)
				p.Stdin.Write([]byte("go\n"))
				<-p.Done()
				if p.ExitString() != "exit status 3" {
					t.Fatalf("the keeper reported %s, want the upstream's exit status 3", p.ExitString())
				}
				awaitEnd(t, marks, tracked, "the upstream's exit")
			})
			t.Run("daemon killed", func(t *testing.T) {
				script, marks := escaping(t)
				d := exec.Command(exe)
				d.Env = daemonEnv(mode.env, testDaemonEnv+"="+script)
				out, err := d.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := d.Start(); err != nil {
					t.Fatal(err)
				}
				defer d.Wait()
				if line, _ := bufio.NewReader(out).ReadString('\n'); line != "started\n" {
					d.Process.Kill()
					t.Fatalf("the test daemon said %q", line)
				}
				awaitEscapees(t, marks)
				awaitOrphaned(t, marks[2], tracked)
				d.Process.Signal(syscall.SIGKILL)
				awaitEnd(t, marks, tracked, "kill -9 of the daemon")
			})
		})
	}
}

// A kept upstream's signal death is reported as its own.
func TestKeeperReportsTheUpstreamsSignal(t *testing.T) {
	exe, _ := os.Executable()
	s := New(Options{KeeperPath: exe, Grace: 200 * time.Millisecond})
	p, err := s.Start(ProcessSpec{Path: "testdata/stubborn.sh", Keeper: true})
	if err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(p.Stdout).ReadString('\n'); line != "started\n" {
		t.Fatalf("read %q", line)
	}
	p.Stop()
	if _, sig := p.Exit(); sig != "killed" {
		t.Fatalf("signal %q, want killed", sig)
	}
	if s.Live() != 0 {
		t.Fatalf("live = %d after Stop", s.Live())
	}
}
