package supervisor

import (
	"errors"
	"os"
	"syscall"
)

// No keeper on Windows (ProcessSpec.Keeper is ignored): every child's Job
// Object does its work, ending the whole tree on Stop and on the daemon's
// death (proc_windows.go, docs/decisions/0048-windows-processes.md).
const (
	keepersWork       = false
	nativeKeeperDeath = false
)

func setKeeperSignal(*syscall.SysProcAttr) {}

// signalKeeper is never called with a keeper here; a child's tree is its job.
func signalKeeper(pid int) { kill(pid) }

func clearDeathSignal(*syscall.SysProcAttr) {}

// deathSocket: no keeper here.
func deathSocket() (keeperEnd, daemonEnd *os.File, err error) {
	return nil, nil, errors.New("no keeper on Windows")
}
