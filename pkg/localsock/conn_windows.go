//go:build windows

package localsock

import (
	"net"
	"syscall"
	"time"
)

// Conn is one connection of the socket, dialed or accepted, and who is at
// its other end.
type Conn struct {
	c    *net.UnixConn
	Peer Peer
}

func (c *Conn) Read(b []byte) (int, error)            { return c.c.Read(b) }
func (c *Conn) Write(b []byte) (int, error)           { return c.c.Write(b) }
func (c *Conn) Close() error                          { return c.c.Close() }
func (c *Conn) SetDeadline(t time.Time) error         { return c.c.SetDeadline(t) }
func (c *Conn) SetReadDeadline(t time.Time) error     { return c.c.SetReadDeadline(t) }
func (c *Conn) SetWriteDeadline(t time.Time) error    { return c.c.SetWriteDeadline(t) }
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return c.c.SyscallConn() }
func (c *Conn) CloseWrite() error                     { return c.c.CloseWrite() }
func (c *Conn) CloseRead() error                      { return c.c.CloseRead() }
