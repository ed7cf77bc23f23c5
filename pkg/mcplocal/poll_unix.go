//go:build unix

package mcplocal

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// This system's own mechanisms, in place of the common file's defaults.
func init() {
	socketWriteReady = pollWriteReady
	hungUp = pollHungUp
}

// pollWriteReady, the system's socketWriteReady, is a relayed connection's
// mcp.Conn.WriteReady: a write of up to a page goes into a Unix socket
// poll(2) reports writable (its send buffer at most a quarter full) without
// waiting.
func pollWriteReady(c syscall.Conn) func(n int) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil
	}
	return func(n int) bool {
		if n > 4096 {
			return false
		}
		ready := false
		rc.Control(func(fd uintptr) {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			k, err := unix.Poll(p, 0)
			ready = err == nil && k == 1 && p[0].Revents == unix.POLLOUT
		})
		return ready
	}
}

// pollHungUp, the system's hungUp, polls fd without waiting: POLLHUP (the
// peer closed both directions) or POLLERR (a pipe whose reader is gone).
// Events 0 asks for nothing but those, which poll always reports.
func pollHungUp(fd int) bool {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: 0}}
	n, err := unix.Poll(pfd, 0)
	if err != nil || n == 0 {
		return false
	}
	return pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0
}
