package mcplocal

import (
	"errors"
	"io"
	"sync"
	"syscall"
	"time"
)

// hangupPoll is how often a half-closed connection is checked for the
// client having gone completely: well inside the supervisor's kill grace.
const hangupPoll = 100 * time.Millisecond

// hangupWatch turns "the client is gone" into a closed channel for the
// session (mcp.Conn.Gone), so its running calls are cancelled and their
// children killed. End of input alone is not that: a client that half-closes
// (the shim, when its editor closes stdin) still wants every reply it is
// owed. Once input has ended, the connection is polled until the peer has
// closed its end completely (POLLHUP on a socket, POLLERR on a pipe whose
// reader went away) or the session ends. Polling with a zero timeout holds
// no thread while waiting.
type hangupWatch struct {
	r    io.Reader
	fd   func() (int, bool) // the descriptor to poll (false: closed, so gone); nil: never watched
	gone chan struct{}
	done chan struct{}
	once sync.Once
	stop sync.Once
}

func newHangupWatch(r io.Reader, fd func() (int, bool)) *hangupWatch {
	return &hangupWatch{r: r, fd: fd, gone: make(chan struct{}), done: make(chan struct{})}
}

// Read reads the connection; end of input starts the watch.
func (h *hangupWatch) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if err != nil && h.fd != nil && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
		h.once.Do(func() { go h.watch() })
	}
	return n, err
}

// Gone is closed when the peer has gone away completely.
func (h *hangupWatch) Gone() <-chan struct{} { return h.gone }

// Close ends the watch (the session is over).
func (h *hangupWatch) Close() { h.stop.Do(func() { close(h.done) }) }

func (h *hangupWatch) watch() {
	t := time.NewTicker(hangupPoll)
	defer t.Stop()
	for {
		fd, ok := h.fd()
		if !ok || hungUp(fd) {
			close(h.gone)
			return
		}
		select {
		case <-h.done:
			return
		case <-t.C:
		}
	}
}

// connFD returns the socket's descriptor for hangupWatch.
func connFD(c syscall.Conn) func() (int, bool) {
	return func() (int, bool) {
		raw, err := c.SyscallConn()
		if err != nil {
			return 0, false
		}
		fd := -1
		if raw.Control(func(f uintptr) { fd = int(f) }) != nil || fd < 0 {
			return 0, false
		}
		return fd, true
	}
}

// fileFD returns the descriptor of w when it is a file (stdout, a pipe), so
// a stdio daemon sees its client's reading end close; other writers (tests)
// are never polled (nil).
func fileFD(w io.Writer) func() (int, bool) {
	if sc, ok := w.(syscall.Conn); ok {
		return connFD(sc)
	}
	return nil
}

// socketWriteReady is a relayed connection's mcp.Conn.WriteReady where the
// system has poll(2) (poll_unix.go sets it); elsewhere nil, which mcp.Conn
// reads as "never known to be ready" (every reply goes through the writer
// queue).
var socketWriteReady = func(syscall.Conn) func(n int) bool { return nil }

// hungUp reports whether the peer behind fd has gone, where poll(2) tells
// (poll_unix.go sets it). Elsewhere a session whose client half-closed ends
// when its replies fail to write instead (mcp.ErrWriteFailed).
var hungUp = func(fd int) bool { return false }
