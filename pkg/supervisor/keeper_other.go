//go:build !linux

package supervisor

import "syscall"

// No parent-death signal: no keeper (ProcessSpec.Keeper is ignored).
const keeperSignal = syscall.Signal(0)

func setKeeperSignal(*syscall.SysProcAttr) {}
