//go:build unix && !linux && !darwin

package localsock

import "errors"

// peerOf is implemented for Linux (SO_PEERCRED) and macOS (LOCAL_PEERCRED);
// on another Unix refusing every connection, both ways, is the safe failure
// (the daemon logs why, the shim says it).
func peerOf(fd int) (Peer, error) {
	return Peer{}, errors.New("the peer credential check is only implemented on Linux and macOS")
}
