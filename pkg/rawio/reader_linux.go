//go:build linux

package rawio

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Reader reads a non-blocking pipe or socket with raw read(2) calls and
// waits for it in the runtime's poller.
type Reader struct {
	f      *os.File
	rc     syscall.RawConn
	once   sync.Once
	closed atomic.Bool
}

// ErrBlocking: a Reader was asked for on a descriptor that blocks, which a
// raw read would block the whole P on.
var ErrBlocking = errors.New("rawio: descriptor is in blocking mode")

// ErrNotPollable: a Reader was asked for on a file the runtime's poller
// does not watch, so a read with nothing to read could not wait.
var ErrNotPollable = errors.New("rawio: file is not in the runtime's poller")

// NewReader reads f, a non-blocking file in the runtime's poller (os.Pipe's
// ends are, and so is a descriptor that was non-blocking when os.NewFile
// wrapped it). Closing the Reader closes f.
func NewReader(f *os.File) (*Reader, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	if !NonBlocking(rc) {
		return nil, ErrBlocking
	}
	// Only a file in the poller takes a deadline; clearing one changes
	// nothing else.
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		return nil, ErrNotPollable
	}
	return &Reader{f: f, rc: rc}, nil
}

// NonBlocking reports whether the descriptor behind rc is in non-blocking
// mode: whether a raw call on it is sure not to wait.
func NonBlocking(rc syscall.RawConn) bool {
	nb := false
	rc.Control(func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		nb = err == nil && fl&unix.O_NONBLOCK != 0
	})
	return nb
}

// DupReader reads the pipe or socket fd, which it makes non-blocking,
// through a duplicate of it: fd stays open, and stays the caller's.
func DupReader(fd int, name string) (*Reader, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	f := os.NewFile(uintptr(d), name)
	r, err := NewReader(f)
	if err != nil {
		f.Close() // the File owns d now: closing d itself would leave its finalizer to close d's next owner
	}
	return r, err
}

// Read reads once, waiting in the poller until something can be read.
// The end of input is io.EOF; a read during or after Close is
// os.ErrClosed.
func (r *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		var n int
		var rerr error
		err := r.rc.Read(func(fd uintptr) bool {
			n, rerr = Read(int(fd), p)
			return rerr != syscall.EAGAIN
		})
		switch {
		case err != nil && r.closed.Load():
			return 0, os.ErrClosed
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: r.f.Name(), Err: err}
		case rerr == syscall.EINTR:
			continue
		case rerr != nil:
			return 0, &os.PathError{Op: "read", Path: r.f.Name(), Err: rerr}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Close ends every read, waiting ones included; once it returns, none is
// under way. Closing again does nothing.
func (r *Reader) Close() error {
	var err error
	r.once.Do(func() {
		r.closed.Store(true)
		err = r.f.Close()
	})
	return err
}
