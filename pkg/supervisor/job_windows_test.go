//go:build windows

package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// A bare name resolves to a batch file through PATH and PATHEXT (npx is
// npx.cmd), and every argument reaches the program the batch file runs
// unchanged; one that cannot be passed safely is refused.
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
	res, err := New(Options{}).Run(context.Background(), Spec{Path: "echoargs", Args: args, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := json.Unmarshal([]byte(res.Stdout), &got); err != nil || !equal(got, args) {
		t.Fatalf("the program read %q (%v; stderr %q), want %q", got, err, res.Stderr, args)
	}
	_, err = New(Options{}).Run(context.Background(), Spec{Path: "echoargs", Args: []string{"a\r\nb"}, Env: env})
	if !errors.Is(err, ErrBatchArgument) {
		t.Fatalf("a line break: %v, want ErrBatchArgument", err)
	}
}

// grandchild waits for the pid a tree process wrote and opens it, so
// that its end can be awaited.
func grandchild(t *testing.T, file string) windows.Handle {
	t.Helper()
	for {
		b, err := os.ReadFile(file)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
			if err != nil {
				t.Fatalf("open the grandchild %d: %v", pid, err)
			}
			t.Cleanup(func() { windows.CloseHandle(h) })
			return h
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
