//go:build unix

package localsock

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Dial connects to the daemon's socket at path after checking that the file
// is ours, then checks that the process that accepted is ours too (Ours of
// its peer credential), before the caller sends a byte: another user's
// socket could otherwise receive every frame an editor sends. A refusal
// wraps ErrNotOurs. It is made of system calls on the descriptor, without
// package net.
func Dial(path string) (*Conn, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if uid := os.Getuid(); int(st.Uid) != uid {
		return nil, fmt.Errorf("%w: socket %s belongs to uid %d, not to you (uid %d); refusing to connect", ErrNotOurs, path, st.Uid, uid)
	}
	fd, err := socketFD()
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	// A Unix-domain connect completes at once (or fails at once), so a
	// blocking connect cannot hang.
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("connect", err)
	}
	p, err := peerOf(fd)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("reading the daemon's credentials: %w", err)
	}
	if err := Ours(p, "the process serving "+path); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%w; refusing to talk to it", err)
	}
	// Non-blocking, so the runtime poller owns it and Close interrupts a Read.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("setnonblock", err)
	}
	return newConn(fd, path, p)
}

// Absent reports whether a Dial error means "nobody is serving there", the
// case in which starting a daemon is right.
func Absent(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}
