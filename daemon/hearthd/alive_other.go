//go:build !windows

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// alive says whether p still runs (signal 0 reaches it). A daemon started by
// this command's parent may linger as a zombie until reaped; that is not
// running.
func alive(p *os.Process) bool {
	err := p.Signal(syscall.Signal(0))
	if err == nil {
		b, rerr := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid))
		if rerr == nil && zombie(b) {
			return false
		}
		return true
	}
	return !errors.Is(err, os.ErrProcessDone) && !errors.Is(err, syscall.ESRCH)
}

// zombie reads a /proc/PID/stat line's state.
func zombie(stat []byte) bool {
	for i := len(stat) - 1; i > 0; i-- {
		if stat[i] == ')' {
			return i+2 < len(stat) && stat[i+2] == 'Z'
		}
	}
	return false
}
