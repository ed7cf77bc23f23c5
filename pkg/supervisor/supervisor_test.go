//go:build linux

package supervisor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// groupAlive lists the live (not zombie) processes whose process group is pgid.
func groupAlive(pgid int) []string {
	var alive []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 2 && fields[2] == strconv.Itoa(pgid) && fields[0] != "Z" && fields[0] != "X" {
			alive = append(alive, e.Name()+":"+fields[0])
		}
	}
	return alive
}

// runUntilStarted runs a script and returns once it printed "started",
// together with the child's pid and a channel for the Run's outcome.
func runUntilStarted(t *testing.T, s *Supervisor, ctx context.Context, script string, grace time.Duration) (int, chan Result) {
	t.Helper()
	started := make(chan struct{})
	var once sync.Once
	out := make(chan Result, 1)
	go func() {
		res, err := s.Run(ctx, Spec{Path: "testdata/" + script, Grace: grace, OnLine: func(l []byte) {
			if string(l) == "started" {
				once.Do(func() { close(started) })
			}
		}})
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		out <- res
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("child did not start")
	}
	// The supervisor knows the group: it is the only live one.
	s.mu.Lock()
	var pid int
	for p := range s.live {
		pid = p
	}
	s.mu.Unlock()
	return pid, out
}

func awaitResult(t *testing.T, out chan Result) Result {
	t.Helper()
	select {
	case r := <-out:
		return r
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return")
	}
	return Result{}
}

func TestCancelKillsTheTree(t *testing.T) {
	s := New(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	pid, out := runUntilStarted(t, s, ctx, "tree.sh", 0)
	if n := len(groupAlive(pid)); n < 2 {
		t.Fatalf("expected the child and its grandchild in group %d, found %d", pid, n)
	}
	cancel()
	res := awaitResult(t, out)
	if !res.Killed || res.KillReason != "cancel" {
		t.Fatalf("%+v", res)
	}
	if alive := groupAlive(pid); len(alive) != 0 {
		t.Fatalf("survivors of group %d: %v", pid, alive)
	}
	if s.Live() != 0 {
		t.Fatal("still counted live")
	}
}

func TestTimeoutKillsTheTree(t *testing.T) {
	s := New(Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	pid, out := runUntilStarted(t, s, ctx, "tree.sh", 0)
	res := awaitResult(t, out)
	if !res.Killed || res.KillReason != "timeout" || !strings.Contains(res.Stdout, "started") {
		t.Fatalf("%+v", res)
	}
	if alive := groupAlive(pid); len(alive) != 0 {
		t.Fatalf("survivors: %v", alive)
	}
}

func TestStubbornChildIsKilledAfterGrace(t *testing.T) {
	s := New(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	pid, out := runUntilStarted(t, s, ctx, "stubborn.sh", 200*time.Millisecond)
	cancel()
	res := awaitResult(t, out)
	if res.Signal != "killed" || res.ExitCode != -1 {
		t.Fatalf("want SIGKILL after the grace, got %+v", res)
	}
	if alive := groupAlive(pid); len(alive) != 0 {
		t.Fatalf("survivors: %v", alive)
	}
}

func TestGracefulChildExitsWithinGrace(t *testing.T) {
	s := New(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	_, out := runUntilStarted(t, s, ctx, "graceful.sh", 10*time.Second)
	cancel()
	res := awaitResult(t, out)
	if res.ExitCode != 0 || res.Signal != "" || !strings.Contains(res.Stdout, "bye") || res.Duration > 9*time.Second {
		t.Fatalf("want a clean exit on SIGTERM well within the grace, got %+v", res)
	}
}

func TestNoCallbackAfterRunReturns(t *testing.T) {
	s := New(Options{})
	var lines atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel once output is flowing, however slow the machine is.
	res, err := s.Run(ctx, Spec{Path: "testdata/chatty.sh", OutputLimit: 100, OnLine: func([]byte) {
		if lines.Add(1) == 100 {
			go cancel()
		}
	}})
	if err != nil || !res.Killed {
		t.Fatalf("%+v %v", res, err)
	}
	after := lines.Load()
	time.Sleep(200 * time.Millisecond)
	if lines.Load() != after || after == 0 {
		t.Fatalf("callbacks: %d at return, %d later", after, lines.Load())
	}
	if len(res.Stdout) > 100 {
		t.Fatalf("output not bounded: %d bytes", len(res.Stdout))
	}
}

func TestConcurrencyCap(t *testing.T) {
	s := New(Options{MaxChildren: 1})
	ctx, cancel := context.WithCancel(context.Background())
	_, out := runUntilStarted(t, s, ctx, "tree.sh", 0)
	short, cancelShort := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelShort()
	_, err := s.Run(short, Spec{Path: "/bin/true"})
	if !errors.Is(err, ErrBusy) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want ErrBusy (and no timeout), got %v", err)
	}
	cancelled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	if _, err := s.Run(cancelled, Spec{Path: "/bin/true"}); !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled while queued: %v", err)
	}
	cancel()
	awaitResult(t, out)
	if res, err := s.Run(context.Background(), Spec{Path: "/bin/true"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("after the slot freed: %+v %v", res, err)
	}
}

func TestEnvironmentStripped(t *testing.T) {
	s := New(Options{})
	res, err := s.Run(context.Background(), Spec{Path: "/usr/bin/env",
		Env: []string{"KEEP=1", "NOTIFY_SOCKET=/run/x", "WATCHDOG_USEC=5", "LISTEN_FDS=3", "LISTEN_PID=1"}})
	if err != nil || strings.TrimSpace(res.Stdout) != "KEEP=1" {
		t.Fatalf("%q %v", res.Stdout, err)
	}
}

func TestExitCodesAndStartFailures(t *testing.T) {
	s := New(Options{})
	res, err := s.Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "echo oops >&2; exit 3"}})
	if err != nil || res.ExitCode != 3 || res.Killed || res.Stderr != "oops" {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := s.Run(context.Background(), Spec{Path: "/nonexistent/tool"}); err == nil || !strings.Contains(err.Error(), "/nonexistent/tool") {
		t.Fatalf("missing binary: %v", err)
	}
}

func TestShutdownKillsLiveChildren(t *testing.T) {
	s := New(Options{Grace: 100 * time.Millisecond})
	pid, out := runUntilStarted(t, s, context.Background(), "stubborn.sh", 0)
	s.Shutdown(context.Background())
	res := awaitResult(t, out)
	if res.Signal != "killed" {
		t.Fatalf("%+v", res)
	}
	if alive := groupAlive(pid); len(alive) != 0 {
		t.Fatalf("survivors: %v", alive)
	}
}

// TestStartCancelStress: 1 000 rounds of start-then-cancel leave no process
// behind. Set HEARTH_STRESS=1 to run it (.ci/run does).
func TestStartCancelStress(t *testing.T) {
	if os.Getenv("HEARTH_STRESS") == "" {
		t.Skip("set HEARTH_STRESS=1 to run 1 000 start-then-cancel rounds")
	}
	s := New(Options{MaxChildren: 16})
	var wg sync.WaitGroup
	pids := make(chan int, 1000)
	sem := make(chan struct{}, 16)
	for i := 0; i < 1000; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(time.Duration(i%20)*time.Millisecond, cancel)
			s.Run(ctx, Spec{Path: "testdata/tree.sh", OnLine: func(l []byte) {
				if strings.HasPrefix(string(l), "grandchild ") {
					p, _ := strconv.Atoi(strings.TrimPrefix(string(l), "grandchild "))
					pids <- p
				}
			}})
		}(i)
	}
	wg.Wait()
	close(pids)
	for p := range pids {
		if stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "stat")); err == nil && !strings.Contains(string(stat), ") Z") {
			t.Errorf("grandchild %d survived: %s", p, stat)
		}
	}
	if s.Live() != 0 {
		t.Fatalf("%d children still live", s.Live())
	}
}

// OnLine is handed whole lines only: a line longer than a line may be
// (MaxLine) is dropped whole and counted, never handed in pieces (its tail
// used to arrive as a line of its own), and the lines around it arrive.
func TestLongLinesAreDroppedWhole(t *testing.T) {
	s := New(Options{})
	dir := t.TempDir()
	script := filepath.Join(dir, "long.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho before\nhead -c 200000 /dev/zero | tr '\\0' x\necho\necho after\n"), 0o755)
	var lines []string
	res, err := s.Run(context.Background(), Spec{Path: script, OnLine: func(l []byte) { lines = append(lines, string(l)) }})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	if strings.Join(lines, ",") != "before,after" || res.LongLines != 1 {
		t.Fatalf("lines %d (%.40q...), long %d", len(lines), lines, res.LongLines)
	}
}

// What OnLine is handed is bounded (LineBytes): a child that prints more
// is stopped once it has, with the reason "output", and no more than the
// bound was handed on.
func TestLineBytesAreBounded(t *testing.T) {
	s := New(Options{})
	var handed atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := s.Run(ctx, Spec{Path: "/bin/sh", Args: []string{"-c", "while :; do echo 0123456789abcdef; done"}, LineBytes: 1 << 20,
		OnLine: func(l []byte) { handed.Add(int64(len(l)) + 1) }})
	if err != nil || !res.Killed || res.KillReason != "output" || ctx.Err() != nil {
		t.Fatalf("%+v %v", res, err)
	}
	if n := handed.Load(); n > 1<<20 {
		t.Fatalf("%d bytes handed on", n)
	}
}

// A working directory that does not exist, or is not a directory, is named
// in the error, for a short child and a long-lived one with its keeper
// alike: never "fork/exec /proc/self/exe: no such file or directory", which
// blames the keeper's executable for the directory it was to run in.
func TestMissingWorkingDirectoryIsNamed(t *testing.T) {
	s := New(Options{KeeperPath: "/proc/self/exe"})
	missing := filepath.Join(t.TempDir(), "gone")
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	for dir, want := range map[string]string{missing: "does not exist", file: "is not a directory"} {
		_, err := s.Run(context.Background(), Spec{Path: "/bin/true", Dir: dir})
		if err == nil || !strings.Contains(err.Error(), "the working directory "+dir+" "+want) {
			t.Errorf("Run in %s: %v", dir, err)
		}
		for _, keeper := range []bool{false, true} {
			p, err := s.Start(ProcessSpec{Path: "/bin/true", Dir: dir, Keeper: keeper})
			if err == nil {
				p.Stop()
			}
			if err == nil || !strings.Contains(err.Error(), "the working directory "+dir+" "+want) || strings.Contains(err.Error(), "/proc/self/exe") {
				t.Errorf("Start (keeper %v) in %s: %v", keeper, dir, err)
			}
		}
	}
}
