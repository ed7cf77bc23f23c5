//go:build unix

package shim

import (
	"io"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// readerGonePoll is how often, once stdin has ended, the shim checks that
// the client still reads its stdout.
const readerGonePoll = 100 * time.Millisecond

func init() { watchReader = pollReader }

// pollReader, the system's watchReader, calls gone once w (the client's
// stdout pipe) has no reader left (POLLERR), until done closes. Writers that
// are not files are never watched.
func pollReader(w io.Writer, done <-chan struct{}, gone func()) {
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
