package proctable

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every
// architecture Linux runs on (the kernel converts to it whatever its own
// HZ), and not a value a process can ask for without libc's sysconf.
const clockTicks = 100

var pageSize = int64(os.Getpagesize())

// List reads every /proc/PID/stat. A process that ends while the table is
// read is left out.
func List() ([]Proc, error) {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return nil, err
	}
	procs := make([]Proc, 0, len(names))
	buf := make([]byte, 1024) // a stat line is some 300 bytes
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		// One open and one read per process, into one buffer: the table is
		// read every few tens of milliseconds (os.ReadFile adds an fstat
		// and a buffer each time).
		fd, err := syscall.Open("/proc/"+n+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			continue // ended since the directory was read
		}
		k, err := syscall.Read(fd, buf)
		syscall.Close(fd)
		if err != nil || k <= 0 {
			continue // ended while it was read
		}
		p, err := parseStat(string(buf[:k]))
		if err != nil {
			return nil, fmt.Errorf("/proc/%s/stat: %w", n, err)
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// Stat reads one process's entry, as List would.
func Stat(pid int) (Proc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, err
	}
	return parseStat(string(b))
}

// Details fills what List leaves out where it costs a call per process:
// on Linux List has it all.
func Details([]Proc) {}

// parseStat reads proc(5)'s /proc/PID/stat: pid (comm) state ppid … with
// starttime the 22nd field. comm may hold spaces and parentheses, so the
// fields after it are counted from its last ')'.
func parseStat(s string) (Proc, error) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 1 || end < open {
		return Proc{}, fmt.Errorf("no (comm) in %q", s)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return Proc{}, fmt.Errorf("pid: %w", err)
	}
	// f[0] is field 3 (state), f[1] field 4 (ppid), f[2] field 5 (pgrp),
	// f[3] field 6 (session), f[11] and f[12] fields 14 and 15 (utime,
	// stime), f[19] field 22 (starttime), f[21] field 24 (rss, in pages).
	f := strings.Fields(s[end+1:])
	if len(f) < 22 {
		return Proc{}, fmt.Errorf("%d fields after comm, want 22 or more", len(f))
	}
	var num [7]int64
	for i, at := range [...]int{1, 2, 3, 11, 12, 19, 21} {
		v, err := strconv.ParseInt(f[at], 10, 64)
		if err != nil || (v < 0 && at != 21) {
			return Proc{}, fmt.Errorf("field %d: %q", at+3, f[at])
		}
		num[i] = v
	}
	return Proc{Pid: pid, PPid: int(num[0]), Pgid: int(num[1]), Sid: int(num[2]), Name: s[open+1 : end], Start: uint64(num[5]),
		Stopped: f[0] == "T" || f[0] == "t", Zombie: f[0] == "Z" || f[0] == "X" || f[0] == "x",
		CPU: time.Duration(num[3]+num[4]) * time.Second / clockTicks, RSS: max(num[6], 0) * pageSize}, nil
}

var boot struct {
	once sync.Once
	at   time.Time
}

// Started is when p started (its Start after the boot time /proc/stat
// gives; the zero time if that cannot be read).
func Started(p Proc) time.Time {
	boot.once.Do(func() {
		f, err := os.Open("/proc/stat")
		if err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
				if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					boot.at = time.Unix(s, 0)
				}
			}
		}
	})
	if boot.at.IsZero() {
		return time.Time{}
	}
	return boot.at.Add(time.Duration(p.Start) * time.Second / clockTicks)
}

// Args is the command line of pid (what it runs and its arguments, as the
// process now shows them: one that set its title shows that).
func Args(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil, err
	}
	return splitNUL(b), nil
}

// Env is the environment pid started with.
func Env(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return nil, err
	}
	return splitNUL(b), nil
}

// UID is the real user id pid runs as.
func UID(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1, err
	}
	return parseStatusUID(string(b))
}

// parseStatusUID reads the real uid from /proc/PID/status's "Uid:" line
// (real, effective, saved, filesystem).
func parseStatusUID(s string) (int, error) {
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(line, "Uid:"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				break
			}
			return strconv.Atoi(f[0])
		}
	}
	return -1, fmt.Errorf("no Uid line in status")
}
