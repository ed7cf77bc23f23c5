//go:build unix

package validate

import (
	"syscall"
	"time"
)

func init() { cpuTime = rusageTime }

// rusageTime is the CPU time (user and system) the process has used so far.
func rusageTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
