//go:build !unix

package hosted

import (
	"io"
	"syscall"
)

// rawWrite never writes without waiting here: TryWrite then leaves every
// frame to Write.
func rawWrite(uintptr, []byte) (int, error) { return 0, syscall.EAGAIN }

// upstreamStdout reads the upstream's stdout as it is.
func upstreamStdout(r io.ReadCloser) io.ReadCloser { return r }

func canTryWrite(syscall.RawConn) bool { return true }

// writersGone: not known here, so a dead upstream's stdout is closed at
// once, whatever is left in it.
func writersGone(io.Reader) bool { return false }
