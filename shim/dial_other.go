//go:build unix && !linux

package shim

import (
	"errors"
	"net"
	"syscall"
)

var errNotOurs = errors.New("not ours")

// dial refuses off Linux: without a peer-credential check the shim cannot
// know the daemon is the user's own, and it never sends a byte unchecked.
func dial(path string) (*net.UnixConn, error) {
	return nil, errors.New("the daemon's credentials can only be checked on Linux so far; refusing to connect")
}

func absent(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}
