package supervisor

import (
	"errors"
	"os"
	"syscall"
)

// No keeper on Windows (ProcessSpec.Keeper is ignored): taskkill /T ends
// the tree.
const (
	keepersWork       = false
	nativeKeeperDeath = false
)

// KeeperMain returns at once: no process is started as a keeper here.
func KeeperMain() {}

func setKeeperSignal(*syscall.SysProcAttr) {}

func signalKeeper(pid int) { kill(pid) }

func clearDeathSignal(*syscall.SysProcAttr) {}

// deathSocket: no keeper here.
func deathSocket() (keeperEnd, daemonEnd *os.File, err error) {
	return nil, nil, errors.New("no keeper on Windows")
}
