package sweep

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// The proc_info system call (what libproc's proc_pidfdinfo wraps):
// PROC_INFO_CALL_PIDFDINFO with a descriptor's flavour, PROC_PIDFDPIPEINFO
// (struct pipe_fdinfo) or PROC_PIDFDSOCKETINFO (struct socket_fdinfo).
const (
	procInfoCallPidFDInfo = 3
	procPidFDSocketInfo   = 3
	procPidFDPipeInfo     = 6
)

// scan reads the process table (sysctl kern.proc.all, and proc_info for
// sessions, memory and CPU), each process's user, command line and
// environment (kern.procargs2), and what its descriptors 0 and 1 are.
// macOS says directly what Linux makes the sweep find out: a pipe's read
// end knows whether its writer is gone (pipe_info's peer handle and
// PIPE_EOF), and a socket whether it can receive more (SS_CANTRCVMORE), so
// no other process's descriptors are read (Writers stay unknown).
func scan() ([]Process, error) {
	table, err := proctable.List()
	if err != nil {
		return nil, err
	}
	proctable.Details(table)
	uid := os.Getuid()
	procs := make([]Process, 0, len(table))
	for _, t := range table {
		p := Process{Proc: t, UID: -1, Started: proctable.Started(t)}
		if u, err := proctable.UID(t.Pid); err == nil {
			p.UID, p.Mine = u, u == uid
		}
		if p.Mine {
			p.Args, _ = proctable.Args(t.Pid)
			p.Env, _ = proctable.Env(t.Pid)
			p.Stdin = fdStream(t.Pid, 0)
			p.Stdout = fdStream(t.Pid, 1)
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// fdStream asks proc_info what descriptor fd of pid is: a pipe, then a
// socket; anything else is "".
func fdStream(pid, fd int) Stream {
	var buf [2048]byte
	if n, ok := fdInfo(pid, fd, procPidFDPipeInfo, buf[:]); ok {
		if s, ok := darwinPipe(buf[:n]); ok {
			return s
		}
	}
	if n, ok := fdInfo(pid, fd, procPidFDSocketInfo, buf[:]); ok {
		if s, ok := darwinSocket(buf[:n]); ok {
			return s
		}
	}
	return Stream{}
}

func fdInfo(pid, fd, flavor int, buf []byte) (int, bool) {
	r, _, errno := unix.Syscall6(unix.SYS_PROC_INFO, procInfoCallPidFDInfo, uintptr(pid), uintptr(flavor), uintptr(fd),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	return int(r), errno == 0 && int(r) > 0
}

// signal sends SIGTERM (or SIGKILL) to pid if it is still the process
// that started at start (macOS has no pidfd: a pid freed and reused in the
// microseconds between the check and the signal is the risk left).
func signal(pid int, start uint64, kill bool) {
	table, err := proctable.List()
	if err != nil {
		return
	}
	if p := proctable.ByPid(table)[pid]; p == nil || p.Start != start || p.Zombie {
		return
	}
	sig := unix.SIGTERM
	if kill {
		sig = unix.SIGKILL
	}
	_ = unix.Kill(pid, sig)
}

func self() me { return me{pid: os.Getpid()} }
