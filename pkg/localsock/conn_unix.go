//go:build unix

package localsock

import (
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Conn is one connection of the socket, dialed or accepted: a non-blocking
// descriptor in the runtime's poller (so Close interrupts a Read, and
// deadlines work), and who is at its other end.
type Conn struct {
	f    *os.File
	Peer Peer
}

func newConn(fd int, name string, p Peer) (*Conn, error) {
	return &Conn{f: os.NewFile(uintptr(fd), name), Peer: p}, nil
}

// FileConn is a Conn of f, an open connection the caller made (one end of
// a socket pair; in tests, any file), whose other end is p.
func FileConn(f *os.File, p Peer) *Conn { return &Conn{f: f, Peer: p} }

func (c *Conn) Read(b []byte) (int, error)  { return c.f.Read(b) }
func (c *Conn) Write(b []byte) (int, error) { return c.f.Write(b) }
func (c *Conn) Close() error                { return c.f.Close() }

// SetDeadline, SetReadDeadline and SetWriteDeadline are os.File's.
func (c *Conn) SetDeadline(t time.Time) error      { return c.f.SetDeadline(t) }
func (c *Conn) SetReadDeadline(t time.Time) error  { return c.f.SetReadDeadline(t) }
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.f.SetWriteDeadline(t) }

// SyscallConn gives the descriptor (the shim sends its client's stdio over
// it; the daemon polls it for a hang-up).
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return c.f.SyscallConn() }

// CloseWrite half-closes: the other end reads the end of input and answers
// what it owes.
func (c *Conn) CloseWrite() error { return c.shutdown(unix.SHUT_WR) }

// CloseRead ends reading: a Read waiting returns the end of input.
func (c *Conn) CloseRead() error { return c.shutdown(unix.SHUT_RD) }

func (c *Conn) shutdown(how int) error {
	rc, err := c.f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Shutdown(int(fd), how) }); err != nil {
		return err
	}
	return os.NewSyscallError("shutdown", serr)
}

// ReadMsg reads data and the control messages that came with it (the
// descriptors a shim hands over), as recvmsg(2) with flags, waiting in the
// poller and honouring the read deadline.
func (c *Conn) ReadMsg(b, oob []byte, flags int) (n, oobn, recvflags int, err error) {
	rc, err := c.f.SyscallConn()
	if err != nil {
		return 0, 0, 0, err
	}
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		n, oobn, recvflags, _, rerr = unix.Recvmsg(int(fd), b, oob, flags)
		return !errors.Is(rerr, unix.EAGAIN)
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return 0, 0, 0, os.NewSyscallError("recvmsg", err)
	}
	return n, oobn, recvflags, nil
}
