package shim

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// unixSocket is a close-on-exec Unix stream socket. macOS has no
// SOCK_CLOEXEC: the fork lock keeps a concurrent exec from inheriting the
// descriptor before it is marked, as the standard library does.
func unixSocket() (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return -1, err
	}
	unix.CloseOnExec(fd)
	return fd, nil
}

// peerUID is the uid of the process at the other end of fd
// (LOCAL_PEERCRED, macOS's SO_PEERCRED).
func peerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Uid), nil
}
