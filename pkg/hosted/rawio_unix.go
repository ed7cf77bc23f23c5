//go:build unix && !linux

package hosted

import (
	"io"
	"syscall"
)

func rawWrite(fd uintptr, b []byte) (int, error) { return syscall.Write(int(fd), b) }

// upstreamStdout reads the upstream's stdout as it is.
func upstreamStdout(r io.ReadCloser) io.ReadCloser { return r }

// canTryWrite: a blocking write here waits as an ordinary system call.
func canTryWrite(syscall.RawConn) bool { return true }
