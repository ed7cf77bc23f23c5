//go:build unix

package shim

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// openFlags: the shim's lock and log files are never symbolic links, and
// no child inherits them.
const openFlags = syscall.O_NOFOLLOW | syscall.O_CLOEXEC

// makeSocketDir creates the socket's directory 0700; the daemon checks it
// is the user's (pkg/localsock).
func makeSocketDir(dir string) error { return os.MkdirAll(dir, 0o700) }

// tryLock takes f's flock without waiting: false when another starter
// holds it.
func tryLock(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// detach makes the daemon a session leader in /: it outlives the shim and
// its editor, and never pins the editor's directory.
func detach(cmd *exec.Cmd) {
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// executable: a file some execute bit is set on.
func executable(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o111 != 0 }
