package proctable

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

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
	buf := make([]byte, 1024) // a stat line is some 300 bytes; its fields past starttime are not read
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
	// f[0] is field 3 (state), f[1] field 4 (ppid), f[2] field 5 (pgrp), f[19]
	// field 22 (starttime).
	f := strings.Fields(s[end+1:])
	if len(f) < 20 {
		return Proc{}, fmt.Errorf("%d fields after comm, want 20 or more", len(f))
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return Proc{}, fmt.Errorf("ppid: %w", err)
	}
	pgid, err := strconv.Atoi(f[2])
	if err != nil {
		return Proc{}, fmt.Errorf("pgrp: %w", err)
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return Proc{}, fmt.Errorf("starttime: %w", err)
	}
	return Proc{Pid: pid, PPid: ppid, Pgid: pgid, Start: start, Stopped: f[0] == "T" || f[0] == "t", Zombie: f[0] == "Z" || f[0] == "X" || f[0] == "x"}, nil
}
