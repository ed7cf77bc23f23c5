package hosted

import (
	"io"
	"os"
	"syscall"

	"github.com/hearth-mcp/hearth/pkg/rawio"
)

// rawWrite is TryWrite's one write to the upstream's non-blocking stdin,
// made raw (package rawio): it cannot wait, so the scheduler need not know.
func rawWrite(fd uintptr, b []byte) (int, error) { return rawio.Write(int(fd), b) }

// upstreamStdout reads the upstream's stdout with raw reads, waiting in the
// poller: each reply then costs the daemon no thread wake-up beyond its
// own. A stdout that is not a non-blocking pipe is read as it is.
func upstreamStdout(r io.ReadCloser) io.ReadCloser {
	if f, ok := r.(*os.File); ok {
		if rr, err := rawio.NewReader(f); err == nil {
			return rr
		}
	}
	return r
}

// canTryWrite: rawWrite may be used on rc only if it cannot wait there.
func canTryWrite(rc syscall.RawConn) bool { return rawio.NonBlocking(rc) }

// poll(2)'s POLLIN and POLLHUP (Linux's values).
const (
	pollIn  = 0x1
	pollHup = 0x10
)

// writersGone reports whether no process holds the write end of the pipe r
// reads any more (POLLHUP): what is in it then is all there will be.
func writersGone(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var ev int16
	if rc.Control(func(fd uintptr) { ev, _ = rawio.Ready(int(fd), pollIn) }) != nil {
		return false
	}
	return ev&pollHup != 0
}
