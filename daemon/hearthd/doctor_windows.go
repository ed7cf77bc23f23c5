//go:build windows

package main

import (
	"os"
	"os/exec"

	"github.com/hearth-mcp/hearth/pkg/localsock"
	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// privateDir says why dir is not the user's alone, by its access list
// (localsock.CheckPrivate), or nil.
func privateDir(dir string) error { return localsock.CheckPrivate(dir) }

// ownSession: Windows has no sessions to leave; the child stays in the
// server's Job Object, which is what ends it.
func ownSession(*exec.Cmd) {}

// pidAlive: the process is in the system's process table (a ToolHelp
// snapshot). A table that cannot be read counts as alive: the keeper's
// check then fails rather than passes unseen.
func pidAlive(pid int) bool {
	procs, err := proctable.List()
	if err != nil {
		return true
	}
	_, ok := proctable.ByPid(procs)[pid]
	return ok
}

func killPid(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// childWords says where the doctor's hosted server puts its child.
const childWords = "in the server's Job Object"
