package localsock

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// peerOf reads LOCAL_PEERCRED (the uid) and LOCAL_PEERPID (the pid): the
// kernel's record of the process at the other end of fd, as SO_PEERCRED is
// on Linux.
func peerOf(fd int) (Peer, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return Peer{}, fmt.Errorf("LOCAL_PEERCRED: %w", err)
	}
	pid, err := unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	if err != nil {
		pid = 0 // the uid is what decides; the pid only names the client
	}
	return Peer{PID: pid, User: strconv.Itoa(int(cred.Uid))}, nil
}
