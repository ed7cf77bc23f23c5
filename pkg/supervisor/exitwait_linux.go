package supervisor

import (
	"os"

	"golang.org/x/sys/unix"
)

// awaitPidfd, Linux's awaitExit, returns once the child p has exited, without reaping it (the
// caller's Wait then returns at once), having waited in the runtime's
// poller on a pidfd. A goroutine blocked in wait itself (os.Process.Wait's
// waitid) holds an OS thread for as long as the child runs, and the runtime
// keeps every thread it ever made: a daemon that ran 300 hosted upstreams
// at once kept 300 threads, and their memory, after they stopped. It
// reports false when it could not wait so (no pidfd: a kernel before 5.3),
// and the caller's Wait blocks as before.
func init() { awaitExit = awaitPidfd }

func awaitPidfd(p *os.Process) bool {
	fd, err := unix.PidfdOpen(p.Pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), "pidfd") // non-blocking: in the poller
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	// A pidfd reads as ready once its process has exited; the check asks
	// without waiting and without reaping (WNOHANG, WNOWAIT).
	var exited bool
	err = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		if werr := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); werr != nil {
			return true // nothing to wait for here: Wait says why
		}
		exited = info.Signo != 0
		return exited
	})
	return err == nil
}
