//go:build unix

package localsock

import (
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// socketFD is a close-on-exec Unix stream socket. Not every Unix has
// SOCK_CLOEXEC (macOS has not): the fork lock keeps a concurrent exec from
// inheriting the descriptor before it is marked, as the standard library
// does.
func socketFD() (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return -1, err
	}
	unix.CloseOnExec(fd)
	return fd, nil
}

// acceptFD accepts on the non-blocking listening socket s: a close-on-exec,
// non-blocking connection, or EAGAIN when none waits.
func acceptFD(s int) (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fd, _, err := unix.Accept(s)
	if err != nil {
		return -1, err
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// Me is the user this process runs as, as Peer.User says it.
func Me() (string, error) { return strconv.Itoa(unix.Getuid()), nil }

// userWords names a Peer.User for a person: "uid 1000".
func userWords(u string) string { return "uid " + u }
