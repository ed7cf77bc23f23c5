package shim

import "golang.org/x/sys/unix"

// unixSocket is a close-on-exec Unix stream socket.
func unixSocket() (int, error) {
	return unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
}

// peerUID is the uid of the process at the other end of fd (SO_PEERCRED).
func peerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Uid), nil
}
