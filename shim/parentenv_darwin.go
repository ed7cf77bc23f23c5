package shim

import (
	"os"

	"golang.org/x/sys/unix"
)

// parentEnv is the environment the shim's parent (the client) started
// with, from sysctl kern.procargs2 (macOS's /proc/PID/environ, readable for
// a process of the same user). As on Linux, a parent that changed its
// environment after it started shows the change as set by the entry.
func parentEnv() ([]string, bool) {
	raw, err := unix.SysctlRaw("kern.procargs2", os.Getppid())
	if err != nil {
		return nil, false
	}
	return parseProcArgs(raw)
}
