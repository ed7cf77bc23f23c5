//go:build linux

package rawio

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Read reads from fd once; nothing to read yet is syscall.EAGAIN. It
// never waits, even should fd have been turned back to blocking mode by
// another holder of its open file description (the client, for its stdio):
// the read is preadv2(2) with RWF_NOWAIT, which asks the kernel itself not
// to wait. A kernel that cannot (EOPNOTSUPP: pipes on older kernels) gets
// a read that is raw only if fd is non-blocking, ordinary otherwise
// (guarded).
func Read(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return read(fd, p, true)
	}
	iov := unix.Iovec{Base: &p[0]}
	iov.SetLen(len(p))
	n, _, e := unix.RawSyscall6(unix.SYS_PREADV2, uintptr(fd), uintptr(unsafe.Pointer(&iov)), 1, offCurrent, offCurrent, unix.RWF_NOWAIT)
	if unsupported(e) {
		return read(fd, p, true)
	}
	k, err := result(n, e)
	raceWrote(p, k)
	return k, err
}

// Write writes to fd once; it may write less than p, and no room at all
// is syscall.EAGAIN. A write of up to PIPE_BUF bytes to a pipe goes in
// whole or not at all. Like Read, it never waits (pwritev2(2) with
// RWF_NOWAIT, or guarded).
func Write(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return write(fd, p, true)
	}
	raceReading(p)
	iov := unix.Iovec{Base: &p[0]}
	iov.SetLen(len(p))
	n, _, e := unix.RawSyscall6(unix.SYS_PWRITEV2, uintptr(fd), uintptr(unsafe.Pointer(&iov)), 1, offCurrent, offCurrent, unix.RWF_NOWAIT)
	if unsupported(e) {
		return write(fd, p, true)
	}
	return result(n, e)
}

// offCurrent is preadv2's and pwritev2's offset -1 (both halves of it):
// the file's own position, the only one a pipe or socket has.
const offCurrent = ^uintptr(0)

// unsupported: the kernel cannot do this I/O without waiting on its own
// (no RWF_NOWAIT for this kind of file, or none at all).
func unsupported(e syscall.Errno) bool {
	return e == syscall.EOPNOTSUPP || e == syscall.EINVAL || e == syscall.ENOSYS
}

func read(fd int, p []byte, guard bool) (int, error) {
	var n uintptr
	var e syscall.Errno
	if guard && !nonBlocking(fd) {
		n, _, e = unix.Syscall(unix.SYS_READ, uintptr(fd), uintptr(bufPtr(p)), uintptr(len(p)))
	} else {
		n, _, e = unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(bufPtr(p)), uintptr(len(p)))
	}
	k, err := result(n, e)
	raceWrote(p, k)
	return k, err
}

func write(fd int, p []byte, guard bool) (int, error) {
	raceReading(p)
	if guard && !nonBlocking(fd) {
		n, _, e := unix.Syscall(unix.SYS_WRITE, uintptr(fd), uintptr(bufPtr(p)), uintptr(len(p)))
		return result(n, e)
	}
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(bufPtr(p)), uintptr(len(p)))
	return result(n, e)
}

// nonBlocking reads fd's O_NONBLOCK now, with a raw fcntl(2) (which never
// waits). Between it and the call it guards, another holder of the open
// file description could still clear the flag: the guard narrows the
// window to those two calls on kernels without RWF_NOWAIT.
func nonBlocking(fd int) bool {
	fl, _, e := unix.RawSyscall(unix.SYS_FCNTL, uintptr(fd), unix.F_GETFL, 0)
	return e == 0 && fl&unix.O_NONBLOCK != 0
}

// Splice moves up to n bytes from the pipe from into to without copying
// them through the process. SPLICE_F_NONBLOCK keeps it from waiting on a
// pipe whatever its mode, but not on a socket that was turned back to
// blocking: the call is raw only while to is non-blocking, and ordinary
// otherwise, so a wait there holds a thread, never a P.
func Splice(from, to, n int) (int, error) {
	if !nonBlocking(to) {
		k, _, e := unix.Syscall6(unix.SYS_SPLICE, uintptr(from), 0, uintptr(to), 0, uintptr(n), unix.SPLICE_F_NONBLOCK)
		return result(k, e)
	}
	k, _, e := unix.RawSyscall6(unix.SYS_SPLICE, uintptr(from), 0, uintptr(to), 0, uintptr(n), unix.SPLICE_F_NONBLOCK)
	return result(k, e)
}

// Ready reports which of events (POLLIN, POLLOUT) fd has now, with
// POLLERR, POLLHUP and POLLNVAL when they hold, without waiting: its
// timeout is zero, whatever fd's mode.
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
