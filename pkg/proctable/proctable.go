// Package proctable lists the system's processes: each one's pid, its
// parent's pid, its process group and session, its name, its start time,
// whether it is stopped or a zombie, and (where the system gives them with
// the table) its resident memory and CPU time. It is the thin system-call
// layer under a hosted upstream's descendant tracker
// (docs/decisions/0049-descendant-tracker.md), the status page's process
// figures and the orphan sweep: /proc on Linux, sysctl kern.proc.all and
// proc_info on macOS, the ToolHelp snapshot on Windows, an error elsewhere.
package proctable

import (
	"bytes"
	"encoding/binary"
	"time"
)

// Proc is one process as the table showed it.
type Proc struct {
	Pid, PPid int
	Pgid      int // its process group
	// Sid is its session (0 where the system has none, Windows, and on
	// macOS until Details fills it).
	Sid int
	// Name is the command's name as the system keeps it (Linux's comm, 15
	// bytes at most; macOS's p_comm; Windows' executable file name). A
	// process may set it (hosted keepers call themselves hearth-keeper).
	Name string
	// Start is the process's start time in the system's own unit (clock
	// ticks since boot on Linux, microseconds since the epoch on macOS,
	// 100 ns since 1601 on Windows): with Pid it names one process, never
	// a later one given the same pid. Started turns it into a time.
	Start uint64
	// Stopped: stopped by a signal (SIGSTOP). Zombie: dead, not yet reaped.
	Stopped, Zombie bool
	// RSS is its resident memory in bytes and CPU the processor time it
	// used (user and system): filled by List on Linux, where /proc/PID/stat
	// has them, and by Details elsewhere (calls per process there, which a
	// keeper's tracker does not pay for).
	RSS int64
	CPU time.Duration
}

// ByPid indexes a table by pid.
func ByPid(procs []Proc) map[int]*Proc {
	m := make(map[int]*Proc, len(procs))
	for i := range procs {
		m[procs[i].Pid] = &procs[i]
	}
	return m
}

// Children indexes a table by parent pid.
func Children(procs []Proc) map[int][]*Proc {
	m := make(map[int][]*Proc, len(procs))
	for i := range procs {
		m[procs[i].PPid] = append(m[procs[i].PPid], &procs[i])
	}
	return m
}

// Tree is root and every process descended from it in the table, root
// first, then in the order a breadth-first walk meets them. A process
// whose parent died and was reparented out of the tree is not in it.
func Tree(procs []Proc, root int) []Proc {
	kids := Children(procs)
	var out []Proc
	seen := map[int]bool{}
	queue := []int{root}
	byPid := ByPid(procs)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		if p, ok := byPid[pid]; ok {
			out = append(out, *p)
		} else if pid == root {
			return nil
		}
		for _, c := range kids[pid] {
			queue = append(queue, c.Pid)
		}
	}
	return out
}

// splitNUL splits NUL-terminated strings, dropping the empty ones at the
// end (a process that rewrote its title leaves NUL padding).
func splitNUL(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	return stringsOf(bytes.Split(b, []byte{0}))
}

func stringsOf(parts [][]byte) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

// parseProcArgs reads macOS's kern.procargs2 record of a process (Args and
// Env on darwin): a 32-bit argc in the machine's byte order (little-endian
// on every Mac Go builds for), the executable's path, NUL padding, argc
// NUL-terminated arguments, then the environment's NUL-terminated strings
// up to an empty one (what follows, the "apple" strings, is not
// environment). It is portable so that it is tested on Linux. false: the
// record is cut short.
func parseProcArgs(b []byte) (args, env []string, ok bool) {
	if len(b) < 4 {
		return nil, nil, false
	}
	argc := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil, nil, false
	}
	b = b[i:]
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	for range argc {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return nil, nil, false
		}
		args = append(args, string(b[:i]))
		b = b[i+1:]
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i <= 0 {
			break // the empty string that ends the environment, or no end at all
		}
		env = append(env, string(b[:i]))
		b = b[i+1:]
	}
	return args, env, true
}
