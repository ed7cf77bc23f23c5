//go:build !unix

package shim

import "io"

// watchReader: without poll(2) (Windows offers no poll of a pipe's
// reader), the shim learns that the client stopped reading from its next
// failed write.
func watchReader(w io.Writer, done <-chan struct{}, gone func()) {}
