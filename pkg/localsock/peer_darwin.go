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

// peerOf reads LOCAL_PEERCRED (the uid) and LOCAL_PEERPID (the pid): the
// kernel's record of the connecting process, as SO_PEERCRED is on Linux.
func peerOf(c *net.UnixConn) (peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return peer{}, err
	}
	var cred *unix.Xucred
	var pid int
	var credErr, pidErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		pid, pidErr = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	}); err != nil {
		return peer{}, err
	}
	if credErr != nil {
		return peer{}, fmt.Errorf("LOCAL_PEERCRED: %w", credErr)
	}
	if pidErr != nil {
		pid = 0 // the uid is what decides; the pid only names the client
	}
	return peer{UID: int(cred.Uid), PID: pid}, nil
}
