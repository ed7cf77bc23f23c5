//go:build unix && !linux && !darwin

package shim

import (
	"errors"
	"io"
	"os"
	"syscall"
)

var errNotOurs = errors.New("not ours")

type conn struct {
	*os.File
}

func (c *conn) CloseWrite() error { return errors.New("unsupported") }

// dial refuses off Linux and macOS: without a peer-credential check the shim cannot
// know the daemon is the user's own, and it never sends a byte unchecked.
func dial(path string) (*conn, error) {
	return nil, errors.New("the daemon's credentials can only be checked on Linux and macOS so far; refusing to connect")
}

func absent(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// watchReader: not implemented here; the shim then learns that the client
// stopped reading from its next failed write.
func watchReader(w io.Writer, done <-chan struct{}, gone func()) {}
