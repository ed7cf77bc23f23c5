package shim

import (
	"os"

	"golang.org/x/sys/unix"
)

func init() { parentEnv = procArgsEnviron }

// procArgsEnviron, the system's parentEnv, is the environment the shim's
// parent (the client) started with, from sysctl kern.procargs2 (macOS's
// /proc/PID/environ, readable for a process of the same user). As on Linux,
// a parent that changed its environment after it started shows the change as
// set by the entry.
func procArgsEnviron() ([]string, bool) {
	raw, err := unix.SysctlRaw("kern.procargs2", os.Getppid())
	if err != nil {
		return nil, false
	}
	return parseProcArgs(raw)
}
