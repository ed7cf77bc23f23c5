//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/hearth-mcp/hearth/pkg/upgrade"
)

func init() { startSuccessor, closeOnExec = startUnixSuccessor, syscall.CloseOnExec }

// startUnixSuccessor starts exe as the daemon a hand-over goes to, in a session
// of its own, with its end of a private socket pair as descriptor 3 and
// this daemon's stderr (its log).
func startUnixSuccessor(exe string) (*os.File, int, error) {
	// The daemon's own executable, judged as an upgrade's file is: a file
	// another user may have put there, or may still change, is not run.
	if err := upgrade.Runnable(exe); err != nil {
		return nil, 0, err
	}
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, 0, err
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "handover"), os.NewFile(uintptr(fds[1]), "handover-successor")
	defer theirs.Close()
	cmd := exec.Command(exe, "serve")
	cmd.Env = append(os.Environ(), handOverEnv+"=3")
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		ours.Close()
		return nil, 0, err
	}
	go cmd.Wait() // reaped should it end before this daemon
	return ours, cmd.Process.Pid, nil
}
