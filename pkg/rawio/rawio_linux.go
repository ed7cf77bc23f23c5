//go:build linux

package rawio

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Read reads from the non-blocking descriptor fd once. Nothing to read
// yet is syscall.EAGAIN.
func Read(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(bufPtr(p)), uintptr(len(p)))
	return result(n, e)
}

// Write writes to the non-blocking descriptor fd once; it may write less
// than p, and no room at all is syscall.EAGAIN. A write of up to PIPE_BUF
// bytes to a pipe goes in whole or not at all.
func Write(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(bufPtr(p)), uintptr(len(p)))
	return result(n, e)
}

// Splice moves up to n bytes from the pipe from into to, both
// non-blocking, without copying them through the process.
func Splice(from, to, n int) (int, error) {
	k, _, e := unix.RawSyscall6(unix.SYS_SPLICE, uintptr(from), 0, uintptr(to), 0, uintptr(n), unix.SPLICE_F_NONBLOCK)
	return result(k, e)
}

// Ready reports which of events (POLLIN, POLLOUT) fd has now, with
// POLLERR, POLLHUP and POLLNVAL when they hold, without waiting.
func Ready(fd int, events int16) (int16, error) {
	p := unix.PollFd{Fd: int32(fd), Events: events}
	var zero unix.Timespec
	_, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&p)), 1, uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
	if e != 0 {
		return 0, errnoErr(e)
	}
	return p.Revents, nil
}

func bufPtr(p []byte) unsafe.Pointer {
	if len(p) == 0 {
		return nil
	}
	return unsafe.Pointer(&p[0])
}

func result(n uintptr, e syscall.Errno) (int, error) {
	if e != 0 {
		return 0, errnoErr(e)
	}
	return int(n), nil
}

// The errors met on every frame, boxed once: an Errno made an error
// anew would allocate each time.
var (
	errEAGAIN error = syscall.EAGAIN
	errEINTR  error = syscall.EINTR
)

func errnoErr(e syscall.Errno) error {
	switch e {
	case syscall.EAGAIN:
		return errEAGAIN
	case syscall.EINTR:
		return errEINTR
	}
	return e
}
