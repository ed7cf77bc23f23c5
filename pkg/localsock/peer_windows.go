//go:build windows

package daemon

import (
	"net"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// peer is who is on the other end of a connection.
type peer struct {
	UID int
	PID int
}

// sioAFUnixGetPeerPID is SIO_AF_UNIX_GETPEERPID (afunix.h):
// _WSAIOR(IOC_VENDOR, 256).
const sioAFUnixGetPeerPID = 0x40000000 | 0x18000000 | 256

// peerOf: Windows has no peer credential. Only the user (and the system)
// can open the socket, whose directory and file the daemon made the user's
// alone (listen_windows.go), so whoever connected is the user: the access
// list is the check (docs/decisions/0047-windows-socket.md). UID is then
// the daemon's own (Go's -1 on Windows), and the pid, which names the
// client in the log, is asked of the socket where the system says it.
func peerOf(c *net.UnixConn) (peer, error) {
	p := peer{UID: os.Getuid()}
	raw, err := c.SyscallConn()
	if err != nil {
		return p, nil
	}
	raw.Control(func(fd uintptr) {
		var pid uint32
		var n uint32
		if windows.WSAIoctl(windows.Handle(fd), sioAFUnixGetPeerPID, nil, 0, (*byte)(unsafe.Pointer(&pid)), 4, &n, nil, 0) == nil && n == 4 {
			p.PID = int(pid)
		}
	})
	return p, nil
}
