//go:build unix

package pgtest

import (
	"errors"
	"io/fs"
	"syscall"
)

// This system's own mechanisms, in place of the common file's defaults.
func init() {
	processGone = killZero
	fileOwner = statOwner
}

// killZero, the system's processGone, reports whether no process has the id
// pid.
func killZero(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// statOwner, the system's fileOwner, is the user and group that own a file.
func statOwner(fi fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}
