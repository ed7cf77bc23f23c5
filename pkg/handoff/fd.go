//go:build linux

package handoff

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/hearth-mcp/hearth/pkg/rawio"
	"golang.org/x/sys/unix"
)

// FD reads or writes one of the client's descriptors with raw non-blocking
// system calls (package rawio), never through the Go runtime's poller. A
// pipe or socket in the poller's epoll set raises an event whenever its
// other end moves (a socket reports write space each time its peer reads),
// and every event wakes the process: the shim, which holds the client's
// stdio while the daemon uses it, would be woken for every frame, and so
// would the daemon for every reply the client reads. A descriptor that is
// not ready is waited for with poll(2) instead, which Close interrupts.
// (The daemon reads the client's stdin with a rawio.Reader, in its own
// poller: input is the one direction whose every event it wants.)
type FD struct {
	fd   int
	mu   sync.Mutex // held across each read or write system call
	shut bool
	wake [2]int // a pipe whose read end every poll also waits on
}

// NewFD wraps fd, which it makes non-blocking. Close does not close fd.
func NewFD(fd int) (*FD, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	f := &FD{fd: fd}
	if err := unix.Pipe2(f.wake[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return nil, os.NewSyscallError("pipe2", err)
	}
	return f, nil
}

// ErrClosed is returned by a read or write after Close.
var ErrClosed = errors.New("handoff: descriptor closed")

// Read reads once, waiting until something can be read.
func (f *FD) Read(p []byte) (int, error) {
	return f.do(unix.POLLIN, func() (int, error) { return rawio.Read(f.fd, p) }, len(p) == 0)
}

// Write writes all of p, waiting for room as needed. A write of up to
// PIPE_BUF bytes to a pipe goes out whole or not at all.
func (f *FD) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := f.do(unix.POLLOUT, func() (int, error) { return rawio.Write(f.fd, p[done:]) }, false)
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

func (f *FD) do(events int16, call func() (int, error), empty bool) (int, error) {
	if empty {
		return 0, nil
	}
	for {
		f.mu.Lock()
		if f.shut {
			f.mu.Unlock()
			return 0, ErrClosed
		}
		n, err := call()
		f.mu.Unlock()
		switch {
		case err == nil && n == 0 && events == unix.POLLIN:
			return 0, io.EOF
		case err == nil:
			return n, nil
		case err == unix.EINTR:
			continue
		case err != unix.EAGAIN:
			return max(n, 0), os.NewSyscallError(map[int16]string{unix.POLLIN: "read", unix.POLLOUT: "write"}[events], err)
		}
		p := []unix.PollFd{{Fd: int32(f.fd), Events: events}, {Fd: int32(f.wake[0]), Events: unix.POLLIN}}
		if _, err := unix.Poll(p, -1); err != nil && err != unix.EINTR {
			return 0, os.NewSyscallError("poll", err)
		}
		if p[1].Revents != 0 {
			return 0, ErrClosed
		}
	}
}

// call runs one system call on f's behalf under its lock, unless f is
// closed.
func (f *FD) call(fn func() (int, error)) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shut {
		return 0, ErrClosed
	}
	for {
		n, err := fn()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// spliceFrom moves n bytes from the pipe src into f, waiting for room.
func (f *FD) spliceFrom(src, n int) error {
	for n > 0 {
		k, err := f.do(unix.POLLOUT, func() (int, error) {
			return rawio.Splice(src, f.fd, n)
		}, false)
		if err != nil {
			return err
		}
		if k <= 0 {
			return errStageEmpty
		}
		n -= k
	}
	return nil
}

// OnePage is the largest write CanTake vouches for: one page, which a
// pipe with any free buffer slot takes whole (and a socket reported
// writable has room for).
const OnePage = 4096

// CanTake reports whether n bytes (at most OnePage) written to f now, or
// spliced into it from a pipe holding them in one buffer (a batch staged
// whole into the empty staging pipe), go in without waiting for the client
// to read: poll(2) says f is writable. Only the descriptor's one writer
// may ask, since another write could take the room.
func (f *FD) CanTake(n int) bool {
	if n > OnePage {
		return false
	}
	ev, err := rawio.Ready(f.fd, unix.POLLOUT)
	return err == nil && ev&unix.POLLOUT != 0 && ev&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) == 0
}

// Close stops every read and write, waiting ones included; after it
// returns none is under way. The descriptor itself stays open.
func (f *FD) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shut {
		return nil
	}
	f.shut = true
	unix.Write(f.wake[1], []byte{0})
	unix.Close(f.wake[1])
	return nil
}

// Release closes what Close left open but the descriptor (the wake pipe);
// call it once nothing uses f.
func (f *FD) Release() {
	f.Close()
	unix.Close(f.wake[0])
}

// SyscallConn gives the descriptor to code that polls it itself (the
// daemon's watch for a client that stopped reading).
func (f *FD) SyscallConn() (syscall.RawConn, error) { return rawConn{f.fd}, nil }

type rawConn struct{ fd int }

func (r rawConn) Control(fn func(uintptr)) error { fn(uintptr(r.fd)); return nil }

func (r rawConn) Read(func(uintptr) bool) error { return errors.ErrUnsupported }

func (r rawConn) Write(func(uintptr) bool) error { return errors.ErrUnsupported }
