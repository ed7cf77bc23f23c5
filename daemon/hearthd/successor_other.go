//go:build !unix

package main

import (
	"errors"
	"os"
)

// startSuccessor refuses: a hand-over passes descriptors over a Unix
// socket pair.
func startSuccessor(exe string) (*os.File, int, error) {
	return nil, 0, errors.New("hearthd restart hands upstreams over only on Unix")
}

// closeOnExec: descriptors are not inherited this way here.
func closeOnExec(int) {}
