//go:build windows

package main

import (
	"os/exec"

	"golang.org/x/sys/windows"

	"github.com/hearth-mcp/hearth/pkg/localsock"
)

// privateDir says why dir is not the user's alone, by its access list
// (localsock.CheckPrivate), or nil.
func privateDir(dir string) error { return localsock.CheckPrivate(dir) }

// ownSession: Windows has no sessions to leave; the child stays in the
// server's Job Object, which is what ends it.
func ownSession(*exec.Cmd) {}

// pidAlive: the process has not exited.
func pidAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}

func killPid(pid int) {
	if h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(pid)); err == nil {
		windows.TerminateProcess(h, 1)
		windows.CloseHandle(h)
	}
}

// childWords says where the doctor's hosted server puts its child.
const childWords = "in the server's Job Object"
