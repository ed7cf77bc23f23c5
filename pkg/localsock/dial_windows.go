//go:build windows

package shim

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/hearth-mcp/hearth/pkg/sockdir"
)

// errNotOurs is a socket or daemon that belongs to another user: never
// retried, never autostarted around.
var errNotOurs = errors.New("not ours")

// conn is the shim's end of the daemon socket: on Windows, package net's
// AF_UNIX connection (the shim always relays there; no descriptor is
// handed over).
type conn struct {
	*net.UnixConn
}

// dial connects to the daemon's socket once its directory and the socket
// file are the user's alone. Windows has no peer credential: only the user
// can have bound a socket there, so the access lists are the check
// (docs/decisions/0047-windows-socket.md), made before a byte is sent.
func dial(path string) (*conn, error) {
	for _, p := range []string{filepath.Dir(path), path} {
		if err := sockdir.Check(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v; refusing to connect", errNotOurs, err)
		}
	}
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	return &conn{UnixConn: c}, nil
}

// absent reports whether a dial error means "nobody is serving there", the
// case in which starting a daemon is right: no socket file, or one nobody
// accepts on.
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, windows.WSAECONNREFUSED)
}

// watchReader: Windows offers no poll of a pipe's reader; the shim learns
// that the client stopped reading from its next failed write.
func watchReader(w io.Writer, done <-chan struct{}, gone func()) {}
