//go:build windows

package localsock

import (
	"net"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sioAFUnixGetPeerPID is SIO_AF_UNIX_GETPEERPID (afunix.h):
// _WSAIOR(IOC_VENDOR, 256).
const sioAFUnixGetPeerPID = 0x40000000 | 0x18000000 | 256

// peerOf: Windows has no peer credential. Only the user (and the system)
// can open the socket, whose directory and file the daemon made the user's
// alone (listen_windows.go), so whoever connected is the user: the access
// list is the check (docs/decisions/0047-windows-socket.md). User is then
// the daemon's own, and the pid, which names the client in the log, is
// asked of the socket where the system says it.
func peerOf(c *net.UnixConn) Peer {
	p := Peer{}
	p.User, _ = Me()
	raw, err := c.SyscallConn()
	if err != nil {
		return p
	}
	raw.Control(func(fd uintptr) {
		var pid uint32
		var n uint32
		if windows.WSAIoctl(windows.Handle(fd), sioAFUnixGetPeerPID, nil, 0, (*byte)(unsafe.Pointer(&pid)), 4, &n, nil, 0) == nil && n == 4 {
			p.PID = int(pid)
		}
	})
	return p
}

// Me is the user this process runs as, as Peer.User says it: its SID.
func Me() (string, error) { return userSID() }

// userWords names a Peer.User for a person: "user S-1-5-21-…".
func userWords(u string) string { return "user " + u }
