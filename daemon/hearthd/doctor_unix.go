//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// privateDir says why dir is not the user's alone (its owner, or a mode
// that lets others in), or nil.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to you (uid %d)", dir, st.Uid, os.Getuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s has mode %04o: others may enter it", dir, perm)
	}
	return nil
}

// ownSession starts c in a session of its own (setsid), as a server's
// child that leaves its process group does.
func ownSession(c *exec.Cmd) { c.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// pidAlive: the process runs (stop.go's alive: a zombie has ended).
func pidAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && alive(p)
}

func killPid(pid int) { syscall.Kill(pid, syscall.SIGKILL) }

// childWords says where the doctor's hosted server puts its child.
const childWords = "in a session of its own"
