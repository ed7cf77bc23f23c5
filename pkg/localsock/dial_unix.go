//go:build linux || darwin

package shim

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// errNotOurs is a socket or daemon that belongs to another user: never
// retried, never autostarted around.
var errNotOurs = errors.New("not ours")

// conn is the shim's end of the daemon socket. It is built on raw system
// calls rather than package net so the shim links no libc: a static binary
// starts faster and keeps a smaller resident set, and thousands may run.
type conn struct {
	*os.File
	fd int
}

// CloseWrite half-closes: the daemon sees end of input and answers what it owes.
func (c *conn) CloseWrite() error { return unix.Shutdown(c.fd, unix.SHUT_WR) }

// dial connects to the daemon's socket after checking the file is ours, then
// checks that the process that accepted is ours too (peerUID). Another
// user's socket could otherwise receive every frame the editor sends.
func dial(path string) (*conn, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nil, err
	}
	uid := os.Getuid()
	if int(st.Uid) != uid {
		return nil, fmt.Errorf("%w: socket %s belongs to uid %d, not to you (uid %d); refusing to connect", errNotOurs, path, st.Uid, uid)
	}
	fd, err := unixSocket()
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	// A Unix-domain connect completes at once (or fails at once), so a
	// blocking connect cannot hang.
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("connect", err)
	}
	peer, err := peerUID(fd)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("reading the daemon's credentials: %w", err)
	}
	if peer != uid {
		unix.Close(fd)
		return nil, fmt.Errorf("%w: the process serving %s runs as uid %d, not as you (uid %d); refusing to talk to it", errNotOurs, path, peer, uid)
	}
	// Non-blocking, so the runtime poller owns it and Close interrupts a Read.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("setnonblock", err)
	}
	return &conn{File: os.NewFile(uintptr(fd), path), fd: fd}, nil
}

// absent reports whether a dial error means "nobody is serving there", the
// case in which starting a daemon is right.
func absent(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// readerGonePoll is how often, once stdin has ended, the shim checks that
// the client still reads its stdout.
const readerGonePoll = 100 * time.Millisecond

// watchReader calls gone once w (the client's stdout pipe) has no reader
// left (POLLERR), until done closes. Writers that are not files are never
// watched.
func watchReader(w io.Writer, done <-chan struct{}, gone func()) {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	t := time.NewTicker(readerGonePoll)
	defer t.Stop()
	for {
		hung := false
		raw.Control(func(fd uintptr) {
			p := []unix.PollFd{{Fd: int32(fd), Events: 0}}
			if n, err := unix.Poll(p, 0); err == nil && n > 0 {
				hung = p[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
			}
		})
		if hung {
			gone()
			return
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}
