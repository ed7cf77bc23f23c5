//go:build unix && !linux

package supervisor

import (
	"os/exec"
	"syscall"
)

// No parent-death signal off Linux: graceful shutdown and the process group
// kill still stop children.
func setDeathSignal(*syscall.SysProcAttr) {}

func start(cmd *exec.Cmd) error { return cmd.Start() }

func clearDeathSignal(*syscall.SysProcAttr) {}

// setKeeperSignal: no parent-death signal here.
func setKeeperSignal(*syscall.SysProcAttr) {}
