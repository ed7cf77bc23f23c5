//go:build windows

package localsock

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// Conn is one connection of the daemon's named pipe, dialed or accepted,
// and who is at its other end. The handle does synchronous I/O
// (docs/decisions/0064-windows-named-pipe.md); os.File reads and writes it,
// and its Close cancels a read or write another goroutine has in progress.
type Conn struct {
	f          *os.File
	Peer       Peer
	readClosed atomic.Bool
	reading    atomic.Int32
}

func newConn(h windows.Handle, name string, p Peer) *Conn {
	return &Conn{f: os.NewFile(uintptr(h), name), Peer: p}
}

// Read reads the pipe; a broken pipe (the other end closed) is io.EOF, and
// so is every read after CloseRead.
func (c *Conn) Read(b []byte) (int, error) {
	if c.readClosed.Load() {
		return 0, io.EOF
	}
	c.reading.Add(1)
	n, err := c.f.Read(b)
	c.reading.Add(-1)
	if err != nil && c.readClosed.Load() {
		return n, io.EOF
	}
	if errors.Is(err, windows.ERROR_BROKEN_PIPE) || errors.Is(err, windows.ERROR_PIPE_NOT_CONNECTED) {
		return n, io.EOF
	}
	return n, err
}

func (c *Conn) Write(b []byte) (int, error) { return c.f.Write(b) }
func (c *Conn) Close() error                { return c.f.Close() }

// Deadlines: synchronous I/O has none (os.ErrNoDeadline); the callers set
// them as bounds they can do without.
func (c *Conn) SetDeadline(t time.Time) error         { return c.f.SetDeadline(t) }
func (c *Conn) SetReadDeadline(t time.Time) error     { return c.f.SetReadDeadline(t) }
func (c *Conn) SetWriteDeadline(t time.Time) error    { return c.f.SetWriteDeadline(t) }
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return c.f.SyscallConn() }

// CloseWrite: a named pipe has no half-close. The other end learns of the
// end when the pipe is closed.
func (c *Conn) CloseWrite() error { return nil }

// CloseRead ends reading: a read in progress is cancelled (CancelIoEx,
// which cancels another thread's synchronous I/O on the handle) and every
// later one returns io.EOF; writing goes on.
func (c *Conn) CloseRead() error {
	c.readClosed.Store(true)
	raw, err := c.f.SyscallConn()
	if err != nil {
		return err
	}
	// A read that was about to start when the flag was set is cancelled
	// on a later round.
	for i := 0; i < 50 && c.reading.Load() > 0; i++ {
		raw.Control(func(h uintptr) { _ = windows.CancelIoEx(windows.Handle(h), nil) })
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}
