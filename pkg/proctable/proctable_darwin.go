package proctable

import (
	"errors"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// p_stat's values (sys/proc.h): stopped, and zombie.
const (
	sstop = 4
	szomb = 5
)

// List asks sysctl kern.proc.all for every process's kinfo_proc.
func List() ([]Proc, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	procs := make([]Proc, 0, len(kps))
	for i := range kps {
		p := &kps[i].Proc
		tv := p.P_starttime
		procs = append(procs, Proc{
			Pid:     int(p.P_pid),
			PPid:    int(kps[i].Eproc.Ppid),
			Pgid:    int(kps[i].Eproc.Pgid),
			Name:    unix.ByteSliceToString(p.P_comm[:]),
			Start:   uint64(tv.Sec)*1e6 + uint64(tv.Usec),
			Stopped: p.P_stat == sstop,
			Zombie:  p.P_stat == szomb,
		})
	}
	return procs, nil
}

// sessionOf is getsid(2) of pid (kinfo_proc's session is a kernel
// pointer, not an id); 0 when it cannot be asked.
func sessionOf(pid int) int {
	sid, err := unix.Getsid(pid)
	if err != nil {
		return 0
	}
	return sid
}

// Started is when p started: Start is microseconds since the epoch.
func Started(p Proc) time.Time { return time.UnixMicro(int64(p.Start)) }

// The proc_info system call (libproc's proc_pidinfo is a wrapper of it):
// the call number, PROC_INFO_CALL_PIDINFO and its flavour
// PROC_PIDTASKINFO, whose struct proc_taskinfo begins with four uint64s:
// virtual size, resident size, total user time, total system time.
const (
	procInfoCallPidInfo = 2
	procPidTaskInfo     = 4
	procTaskInfoSize    = 96 // sizeof(struct proc_taskinfo)
)

// Details fills each process's session (getsid) and its RSS and CPU from
// proc_info's task info: system calls per process, so List leaves them to
// callers that need them.
// The times are in Mach absolute time units: nanoseconds on Intel, 125/3
// ns on Apple silicon (mach_timebase_info, a libSystem call, is not
// asked; that is the ratio every Apple silicon Mac has).
func Details(procs []Proc) {
	var buf [procTaskInfoSize]byte
	for i := range procs {
		procs[i].Sid = sessionOf(procs[i].Pid)
		r, _, errno := unix.Syscall6(unix.SYS_PROC_INFO, procInfoCallPidInfo, uintptr(procs[i].Pid), procPidTaskInfo, 0,
			uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if errno != 0 || int(r) < 32 {
			continue
		}
		rss, user, sys := taskInfo(buf[:])
		procs[i].RSS = int64(rss)
		procs[i].CPU = machTime(user + sys)
	}
}

func machTime(t uint64) time.Duration {
	if runtime.GOARCH == "arm64" {
		return time.Duration(t * 125 / 3)
	}
	return time.Duration(t)
}

// Args is pid's command line, from sysctl kern.procargs2.
func Args(pid int) ([]string, error) {
	args, _, err := procArgs(pid)
	return args, err
}

// Env is pid's environment, from sysctl kern.procargs2.
func Env(pid int) ([]string, error) {
	_, env, err := procArgs(pid)
	return env, err
}

func procArgs(pid int) ([]string, []string, error) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, nil, err
	}
	args, env, ok := parseProcArgs(b)
	if !ok {
		return nil, nil, errors.New("kern.procargs2: a record cut short")
	}
	return args, env, nil
}

// UID is the real user id pid runs as (kinfo_proc's e_pcred.p_ruid).
func UID(pid int) (int, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return -1, err
	}
	return int(kp.Eproc.Pcred.P_ruid), nil
}
