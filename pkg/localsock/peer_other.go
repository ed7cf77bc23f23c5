//go:build unix && !linux && !darwin

package daemon

import (
	"errors"
	"net"
)

type peer struct {
	UID int
	PID int
}

// peerOf is implemented for Linux (SO_PEERCRED) and macOS
// (LOCAL_PEERCRED); on another Unix refusing every connection is the safe
// failure (the daemon logs why).
func peerOf(c *net.UnixConn) (peer, error) {
	return peer{}, errors.New("peer credential check is only implemented on Linux and macOS")
}
