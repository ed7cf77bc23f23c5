package supervisor

import "syscall"

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
