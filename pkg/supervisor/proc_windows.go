//go:build windows

package supervisor

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// prepare starts the child in a new process group, so the console's Ctrl
// events and our tree kill address it and its descendants.
func prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

func start(cmd *exec.Cmd) error { return cmd.Start() }

// Windows has no SIGTERM for a process tree: both steps use taskkill /T
// (the tree) /F (forced), so the grace period is skipped there. A tree that
// is already gone makes taskkill fail, which is ignored.
func terminate(pid int) { kill(pid) }

func kill(pid int) {
	if pid <= 0 {
		return
	}
	_ = exec.Command("taskkill", "/pid", strconv.Itoa(pid), "/T", "/F").Run()
}

func exitStatus(state *os.ProcessState) (int, string) { return state.ExitCode(), "" }

// awaitGroupGone: taskkill /T /F returns once the tree is terminated.
func awaitGroupGone(pid int, limit time.Duration) bool { return true }
