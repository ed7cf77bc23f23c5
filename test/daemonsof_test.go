//go:build linux

package test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestDaemonsOfSkipsForksNotYetExeced: the count of daemons the tests
// rely on skips a daemon's child between its fork and its exec, which
// the kernel shows with the daemon's executable and environment (a shell
// stands in for hearthd: its subshell is such a fork, and stays one).
// Counted, such a child was once killed as a restart's successor.
func TestDaemonsOfSkipsForksNotYetExeced(t *testing.T) {
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Skip(err)
	}
	kv := "HEARTH_TEST_FORK_MARK=" + t.Name()
	cmd := exec.Command(sh, "-c", "(while :; do sleep 0.2; done) & wait")
	cmd.Env = []string{"PATH=/usr/bin:/bin", kv}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var all []int
	t.Cleanup(func() {
		for _, pid := range all {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		cmd.Process.Kill()
		cmd.Wait()
	})
	for deadline := time.Now().Add(5 * time.Second); len(all) < 2 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		all = imageProcessesWithEnv(sh, kv)
	}
	if len(all) < 2 {
		t.Fatalf("the subshell never showed: %v", all)
	}
	if got := daemonsOf(sh, kv); !slices.Equal(got, []int{cmd.Process.Pid}) {
		t.Fatalf("daemonsOf = %v, want only the shell %d (of %v)", got, cmd.Process.Pid, all)
	}
}
