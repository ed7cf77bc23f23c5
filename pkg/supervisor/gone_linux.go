package supervisor

import (
	"syscall"

	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// groupRunning reports whether any process of the group is still alive.
// kill(-pgid, 0) also counts zombies (dead, waiting for their new parent to
// reap them), so when it says yes, the process table tells the dead from
// the living.
func groupRunning(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil {
		return false // ESRCH: nobody left
	}
	procs, err := proctable.List()
	if err != nil {
		return true
	}
	for _, p := range procs {
		if p.Pgid == pgid && !p.Zombie {
			return true
		}
	}
	return false
}
