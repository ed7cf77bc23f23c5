//go:build unix

package supervisor

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// prepare puts the child in a process group of its own, so the group can be
// signalled as one: the child and everything it starts (unless it calls
// setsid; only the service's cgroup catches that).
func prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
}

// terminate asks the group to stop; kill makes it. "No such process" means
// it is gone already, which is the goal.
func terminate(pgid int) { signalGroup(pgid, syscall.SIGTERM) }
func kill(pgid int)      { signalGroup(pgid, syscall.SIGKILL) }

func signalGroup(pgid int, sig syscall.Signal) {
	if pgid <= 0 {
		return
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = err // EPERM: the group is not ours any more (pid reuse); nothing to do
	}
}

func exitStatus(state *os.ProcessState) (int, string) {
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String()
	}
	return state.ExitCode(), ""
}

// awaitGroupGone waits, up to limit, until SIGKILL has finished every process
// of the group: the signal is delivered asynchronously, and Run promises
// that nothing of the request is alive when it returns.
func awaitGroupGone(pgid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for groupRunning(pgid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}

// forget: a process group needs nothing closed.
func forget(int) {}

// groupRunning reports whether any process of the group is still alive.
// kill(-pgid, 0) also counts zombies (dead, waiting for their new parent to
// reap them), so when it says yes, Linux's process table tells the dead
// from the living; elsewhere they cannot be told apart, and a zombie counts.
func groupRunning(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil {
		return false // ESRCH: nobody left
	}
	if runtime.GOOS != "linux" {
		return true
	}
	procs, err := proctable.List()
	if err != nil {
		return true
	}
	for _, p := range procs {
		if p.Pgid == pgid && !p.Zombie {
			return true
		}
	}
	return false
}
