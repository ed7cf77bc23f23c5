package hosted

import (
	"io"
	"syscall"
)

// stdinPeer writes frames, one line each, to an upstream's stdin (the
// router's route.Peer for it).
type stdinPeer struct {
	w  io.Writer
	rc syscall.RawConn // nil: no way to write without waiting
}

func newStdinPeer(w io.Writer) *stdinPeer {
	p := &stdinPeer{w: w}
	if sc, ok := w.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil && canTryWrite(rc) {
			p.rc = rc
		}
	}
	return p
}

// Write writes a frame; the label is a client's (route.Peer).
func (p *stdinPeer) Write(frame []byte, _ string) error {
	_, err := p.w.Write(append(frame, '\n'))
	return err
}

// TryWrite writes a frame that fits in one atomic pipe write if the pipe
// has room for it now; otherwise it writes nothing and says so.
func (p *stdinPeer) TryWrite(frame []byte, _ string) (bool, error) {
	if p.rc == nil || len(frame)+1 > pipeBuf {
		return false, nil
	}
	line := append(frame, '\n')
	var n int
	var werr error
	err := p.rc.Write(func(fd uintptr) bool {
		n, werr = rawWrite(fd, line)
		return true // never wait here: a full pipe is the outbox's goroutine's to wait for
	})
	if err != nil {
		return false, err
	}
	switch {
	case werr == nil && n == len(line):
		return true, nil
	case werr == syscall.EAGAIN || werr == syscall.EINTR:
		return false, nil
	case werr == nil:
		// Not possible for a pipe write of at most PIPE_BUF bytes; were it
		// a partial write, the line could not be completed in order.
		return false, io.ErrShortWrite
	}
	return false, werr
}
