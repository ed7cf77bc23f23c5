//go:build unix && !linux

package daemon

import (
	"errors"
	"net"
)

type peer struct {
	UID int
	PID int
}

// peerOf is not implemented off Linux yet; refusing every connection is the
// safe failure (the daemon logs why).
func peerOf(c *net.UnixConn) (peer, error) {
	return peer{}, errors.New("peer credential check is only implemented on Linux")
}
