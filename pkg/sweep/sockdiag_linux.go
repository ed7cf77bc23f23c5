package sweep

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// The kernel's diagnostics of Unix sockets (sock_diag(7), unix_diag.h):
// one dump request over NETLINK_SOCK_DIAG lists every Unix socket with its
// inode, its peer's inode (UDIAG_SHOW_PEER) and its shutdown state, which
// is how a socket stdin's other end is found: a client started by Node
// (libuv) hands its children socket pairs, not pipes.
const (
	sockDiagByFamily = 20
	udiagShowPeer    = 0x04
	unixDiagPeer     = 2
	unixDiagShutdown = 6
	rcvShutdown      = 1 // sk_shutdown's RCV_SHUTDOWN: nothing more will be read
)

// sockInfo is one Unix socket's peer and shutdown state.
type sockInfo struct {
	peer     uint32
	shutdown uint8
}

// unixSockets dumps every Unix socket of the system.
func unixSockets() (map[uint64]sockInfo, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("sock_diag: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Sendto(fd, unixDiagRequest(1), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("sock_diag: %w", err)
	}
	out := map[uint64]sockInfo{}
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return nil, fmt.Errorf("sock_diag: %w", err)
		}
		done, err := parseUnixDiag(buf[:n], out)
		if err != nil || done {
			return out, err
		}
	}
}

// unixDiagRequest is a netlink message asking for a dump of every Unix
// socket in every state, with its peer.
func unixDiagRequest(seq uint32) []byte {
	const size = unix.SizeofNlMsghdr + 24 // struct unix_diag_req
	b := make([]byte, size)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], size)
	ne.PutUint16(b[4:], sockDiagByFamily)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(b[8:], seq)
	r := b[unix.SizeofNlMsghdr:]
	r[0] = unix.AF_UNIX
	ne.PutUint32(r[4:], 0xffffffff) // udiag_states: all
	ne.PutUint32(r[12:], udiagShowPeer)
	ne.PutUint32(r[16:], 0xffffffff) // no cookie
	ne.PutUint32(r[20:], 0xffffffff)
	return b
}

// parseUnixDiag reads one datagram of the dump's answer into out: netlink
// messages, each a struct unix_diag_msg (family, type, state, pad, inode,
// cookie) and its attributes. done: the dump's end (NLMSG_DONE) came.
func parseUnixDiag(b []byte, out map[uint64]sockInfo) (bool, error) {
	ne := binary.NativeEndian
	for len(b) >= unix.SizeofNlMsghdr {
		l := int(ne.Uint32(b))
		typ := ne.Uint16(b[4:])
		if l < unix.SizeofNlMsghdr || l > len(b) {
			return false, errors.New("sock_diag: a message cut short")
		}
		msg := b[unix.SizeofNlMsghdr:l]
		b = b[min(align4(l), len(b)):]
		switch typ {
		case unix.NLMSG_DONE:
			return true, nil
		case unix.NLMSG_ERROR:
			if len(msg) >= 4 {
				if code := int32(ne.Uint32(msg)); code != 0 {
					return false, fmt.Errorf("sock_diag: %w", unix.Errno(-code))
				}
			}
			return true, nil
		case sockDiagByFamily:
		default:
			continue
		}
		if len(msg) < 16 {
			return false, errors.New("sock_diag: a socket's record cut short")
		}
		ino := uint64(ne.Uint32(msg[4:]))
		var info sockInfo
		for attrs := msg[16:]; len(attrs) >= 4; {
			al, at := int(ne.Uint16(attrs)), ne.Uint16(attrs[2:])
			if al < 4 || al > len(attrs) {
				return false, errors.New("sock_diag: an attribute cut short")
			}
			v := attrs[4:al]
			switch {
			case at == unixDiagPeer && len(v) >= 4:
				info.peer = ne.Uint32(v)
			case at == unixDiagShutdown && len(v) >= 1:
				info.shutdown = v[0]
			}
			attrs = attrs[min(align4(al), len(attrs)):]
		}
		out[ino] = info
	}
	return false, nil
}

func align4(n int) int { return (n + 3) &^ 3 }
