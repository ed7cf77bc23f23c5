package daemon

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// peer is who is on the other end of a connection.
type peer struct {
	UID int
	PID int
}

// peerOf reads SO_PEERCRED: the kernel's record of the connecting process,
// which the client cannot forge.
func peerOf(c *net.UnixConn) (peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return peer{}, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return peer{}, err
	}
	if credErr != nil {
		return peer{}, fmt.Errorf("SO_PEERCRED: %w", credErr)
	}
	return peer{UID: int(cred.Uid), PID: int(cred.Pid)}, nil
}
