//go:build !unix

package main

import (
	"errors"
	"os"
)

// startSuccessor refuses: a hand-over passes descriptors over a Unix
// socket pair.
func startSuccessor(exe string) (*os.File, int, error) {
	return nil, 0, errors.New("a daemon hands its hosted servers to a successor only on Unix (over a Unix socket pair): stop it with hearthd stop, and the next client's shim starts hearthd again")
}

// closeOnExec: descriptors are not inherited this way here.
func closeOnExec(int) {}
