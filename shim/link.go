package shim

import (
	"os"
	"sync/atomic"
)

// link is the shim's connection to the daemon (under Shim.mu, held while
// writing to it): the connection, which of them it is, and the buffer its
// frames are written from.
type link struct {
	conn *conn
	// gen counts the connections made: a connection's reader says which
	// one it read, so that what an old one delivers is told apart.
	gen  int
	wbuf []byte
	// live is conn, for finish: closing it ends a write blocked under mu.
	live atomic.Pointer[conn]
}

// set makes c the current connection (nil: none).
func (l *link) set(c *conn) {
	l.conn = c
	l.live.Store(c)
}

// write sends one frame and its newline to the daemon.
func (l *link) write(line []byte) error {
	if l.conn == nil {
		return os.ErrClosed
	}
	// One write per frame, from a buffer kept for small ones (no garbage
	// per frame: the shim's heap stays small under load).
	buf := l.wbuf[:0]
	if len(line) >= cap(buf) {
		buf = make([]byte, 0, len(line)+1)
	}
	buf = append(append(buf, line...), '\n')
	if cap(buf) <= 64<<10 {
		l.wbuf = buf
	}
	_, err := l.conn.Write(buf)
	return err
}
