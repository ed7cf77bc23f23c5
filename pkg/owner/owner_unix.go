//go:build unix

package owner

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// openFlags: the lock file is never a symbolic link, and no child inherits it.
const openFlags = syscall.O_NOFOLLOW | syscall.O_CLOEXEC

// tryLock takes f's flock, exclusive or shared, without waiting: false when
// another holds it in a conflicting way. The kernel drops it when the
// process dies.
func tryLock(f *os.File, exclusive bool) (bool, error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// unlock releases what tryLock took.
func unlock(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// alive reports whether a process with this pid exists (EPERM: it does,
// as another user's).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Adopt makes f, the owner lock's file a predecessor handed over (File),
// this process's lock of home: it must hold the lock (the predecessor's
// flock, which the shared open file carries), and gets this pid written.
func Adopt(home string, f *os.File) (*Lock, error) {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("the owner lock handed over is not held: %w", err)
	}
	err := f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("write the owner lock: %w", err)
	}
	return &Lock{f: f, home: home}, nil
}
