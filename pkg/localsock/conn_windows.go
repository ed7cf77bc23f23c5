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
// and who is at its other end. Its handle is overlapped: os.File reads and
// writes it on the Go runtime's completion port, so a read and a write go
// on at once, deadlines apply and Close ends what is in progress
// (docs/decisions/0064-windows-named-pipe.md).
type Conn struct {
	f          *os.File
	Peer       Peer
	readClosed atomic.Bool
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
	n, err := c.f.Read(b)
	if err != nil && c.readClosed.Load() {
		return n, io.EOF
	}
	if errors.Is(err, windows.ERROR_BROKEN_PIPE) || errors.Is(err, windows.ERROR_PIPE_NOT_CONNECTED) {
		return n, io.EOF
	}
	return n, err
}

func (c *Conn) Write(b []byte) (int, error)           { return c.f.Write(b) }
func (c *Conn) Close() error                          { return c.f.Close() }
func (c *Conn) SetDeadline(t time.Time) error         { return c.f.SetDeadline(t) }
func (c *Conn) SetReadDeadline(t time.Time) error     { return c.f.SetReadDeadline(t) }
func (c *Conn) SetWriteDeadline(t time.Time) error    { return c.f.SetWriteDeadline(t) }
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return c.f.SyscallConn() }

// CloseWrite: a named pipe has no half-close. The other end learns of the
// end when the pipe is closed.
func (c *Conn) CloseWrite() error { return nil }

// CloseRead ends reading: a read in progress returns at once (its deadline
// set to now) and every later one returns io.EOF; writing goes on.
func (c *Conn) CloseRead() error {
	c.readClosed.Store(true)
	return c.f.SetReadDeadline(time.Now())
}
