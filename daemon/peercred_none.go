//go:build !unix && !windows

package daemon

import (
	"errors"
	"net"
)

type peer struct {
	UID int
	PID int
}

// peerOf: no socket is served off Unix and Windows (listen_other.go); were one
// accepted, refusing it is the safe failure.
func peerOf(c *net.UnixConn) (peer, error) {
	return peer{}, errors.New("peer credentials are not implemented on this system")
}
