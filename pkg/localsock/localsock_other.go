//go:build !unix && !windows

package localsock

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

// errNotHere is why nothing is served or dialed off Unix and Windows: the
// socket needs a peer check the system offers
// (docs/decisions/0044-platforms.md). hearthd stdio does not need it.
var errNotHere = fmt.Errorf("not supported on %s yet: the daemon's socket and its peer check are implemented for Unix and Windows only (docs/decisions/0044-platforms.md); use hearthd stdio", runtime.GOOS)

type listener struct{}

func (listener) accept() (*Conn, error)         { return nil, errNotHere }
func (listener) close() error                   { return nil }
func lockSocket(string) (*os.File, bool, error) { return nil, false, errNotHere }
func bind(string, uint32) (listener, error)     { return listener{}, errNotHere }
func prepareDir(string, bool) error             { return errNotHere }
func removeStale(string) error                  { return errNotHere }
func Inherit(f *os.File) (*Listener, error)     { return nil, errNotHere }
func Dial(path string) (*Conn, error)           { return nil, errNotHere }
func Absent(err error) bool                     { return false }
func Me() (string, error)                       { return "", errNotHere }
func userWords(u string) string                 { return u }

// Conn is never made here.
type Conn struct{ Peer Peer }

func (c *Conn) Read([]byte) (int, error)              { return 0, errNotHere }
func (c *Conn) Write([]byte) (int, error)             { return 0, errNotHere }
func (c *Conn) Close() error                          { return nil }
func (c *Conn) CloseWrite() error                     { return errNotHere }
func (c *Conn) CloseRead() error                      { return errNotHere }
func (c *Conn) SetDeadline(time.Time) error           { return errNotHere }
func (c *Conn) SetReadDeadline(time.Time) error       { return errNotHere }
func (c *Conn) SetWriteDeadline(time.Time) error      { return errNotHere }
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return nil, errors.ErrUnsupported }
