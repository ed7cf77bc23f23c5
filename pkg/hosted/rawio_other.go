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
