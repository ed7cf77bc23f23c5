//go:build unix

package mcplocal

import "golang.org/x/sys/unix"

// hungUp polls fd without waiting: POLLHUP (the peer closed both
// directions) or POLLERR (a pipe whose reader is gone). Events 0 asks for
// nothing but those, which poll always reports.
func hungUp(fd int) bool {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: 0}}
	n, err := unix.Poll(pfd, 0)
	if err != nil || n == 0 {
		return false
	}
	return pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0
}
