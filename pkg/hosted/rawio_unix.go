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

// writersGone: not known here without poll(2), so a dead upstream's stdout
// is closed at once, whatever is left in it.
func writersGone(io.Reader) bool { return false }
