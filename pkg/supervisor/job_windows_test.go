//go:build windows

package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// A bare name resolves to a batch file through PATH and PATHEXT (npx is
// npx.cmd), and every argument reaches the program the batch file runs
// unchanged; one that cannot be passed safely is refused.
//
// "Unchanged" is as a program built with the C runtime reads its command
// line (node.exe, which npx.cmd runs; parseArgv), where "" within quotes is
// a quote. Go's own os.Args, like CommandLineToArgvW, reads "" within
// quotes as a quote that also ends the quoting, so a Go program run through
// a batch file misreads an argument holding a quote (docs/decisions/0048-
// windows-processes.md).
func TestBatchFileGetsItsArguments(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "echoargs.cmd"), []byte("@\""+exe+"\" %*\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	env := append(os.Environ(), argvEnv+"=1")
	args := []string{"plain", "a b", "", `a"&calc`, "x|y", "<in", ">out", "^", "%PATH%", "100%", "!PATH!", `dir\`, `a\"b`, "(c)", "café"}
	if underWine() {
		// Wine 8's cmd expands % again in the text it substitutes for %*
		// (Windows's does not): %PATH% would arrive expanded there
		// whatever the quoting: those are not checked there (no log, so
		// that tools/wine/results.go can tell a passing test from a
		// failing one). docs/development.md.
		args = slices.DeleteFunc(args, func(a string) bool { return strings.Contains(a, "%") })
	}
	res, err := New(Options{}).Run(context.Background(), Spec{Path: "echoargs", Args: args, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	var got argvReport
	if err := json.Unmarshal([]byte(res.Stdout), &got); err != nil {
		t.Fatalf("%v in %q (stderr %q)", err, res.Stdout, res.Stderr)
	}
	if crt := parseArgv(got.Line); len(crt) == 0 || !equal(crt[1:], args) {
		t.Fatalf("a C runtime program would read %q from %s, want %q", crt, got.Line, args)
	}
	_, err = New(Options{}).Run(context.Background(), Spec{Path: "echoargs", Args: []string{"a\r\nb"}, Env: env})
	if !errors.Is(err, ErrBatchArgument) {
		t.Fatalf("a line break: %v, want ErrBatchArgument", err)
	}
}

// underWine says whether this runs on Wine, whose ntdll exports
// wine_get_version.
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// grandchild waits for the pid a tree process wrote and opens it, so
// that its end can be awaited; the bound only keeps a failing test from
// hanging (a tree that could not start writes why instead).
func grandchild(t *testing.T, file string) windows.Handle {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if err == nil && strings.HasPrefix(string(b), "error: ") {
			t.Fatalf("the tree could not start its child: %s", b)
		}
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
			if err != nil {
				t.Fatalf("open the grandchild %d: %v", pid, err)
			}
			t.Cleanup(func() { windows.CloseHandle(h) })
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("no grandchild's pid in %s (%q, %v)", file, b, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// awaitEnd waits for the process to end; the bound only keeps a failing
// test from hanging.
func awaitEnd(t *testing.T, h windows.Handle, what string) {
	t.Helper()
	if ev, err := windows.WaitForSingleObject(h, 60_000); err != nil || ev != windows.WAIT_OBJECT_0 {
		t.Fatalf("%s: the grandchild still runs (%d, %v)", what, ev, err)
	}
}

// Stop ends the upstream's whole tree: its job.
func TestStopEndsTheJob(t *testing.T) {
	exe, _ := os.Executable()
	file := filepath.Join(t.TempDir(), "pid")
	p, err := New(Options{Grace: 200 * time.Millisecond}).Start(ProcessSpec{Path: exe, Env: append(os.Environ(), treeEnv+"="+file)})
	if err != nil {
		t.Fatal(err)
	}
	h := grandchild(t, file)
	p.Stop()
	awaitEnd(t, h, "after Stop")
}

// The daemon's death, a kill it cannot catch, ends the upstream's whole
// tree: the kernel closes the daemon's only handle of the job.
func TestDaemonDeathEndsTheJob(t *testing.T) {
	exe, _ := os.Executable()
	file := filepath.Join(t.TempDir(), "pid")
	daemon := exec.Command(exe)
	daemon.Env = append(os.Environ(), daemonEnv+"="+file)
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	h := grandchild(t, file)
	daemon.Process.Kill() // TerminateProcess
	daemon.Wait()
	awaitEnd(t, h, "after the daemon was killed")
}
