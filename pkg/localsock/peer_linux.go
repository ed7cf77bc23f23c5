package localsock

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// peerOf reads SO_PEERCRED: the kernel's record of the process at the other
// end of fd (the client's at its connect, the server's at its listen), which
// that process cannot forge.
func peerOf(fd int) (Peer, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return Peer{}, fmt.Errorf("SO_PEERCRED: %w", err)
	}
	return Peer{PID: int(cred.Pid), User: strconv.Itoa(int(cred.Uid))}, nil
}
