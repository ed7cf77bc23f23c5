//go:build windows

package localsock

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/windows"
)

// Dial connects to the daemon's socket once its directory and the socket
// file are the user's alone. Windows has no peer credential: only the user
// can have bound a socket there, so the access lists are the check
// (docs/decisions/0047-windows-socket.md), made before a byte is sent.
func Dial(path string) (*Conn, error) {
	for _, p := range []string{filepath.Dir(path), path} {
		if err := CheckPrivate(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v; refusing to connect", ErrNotOurs, err)
		}
	}
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	me, _ := Me()
	return &Conn{c: c, Peer: Peer{User: me}}, nil
}

// Absent reports whether a Dial error means "nobody is serving there", the
// case in which starting a daemon is right: no socket file, or one nobody
// accepts on.
func Absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, windows.WSAECONNREFUSED)
}
