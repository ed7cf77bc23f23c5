//go:build unix

package supervisor

import (
	"runtime"
	"syscall"

	"github.com/hearth-mcp/hearth/pkg/keeper"
)

// keepersWork: a keeper can run here (pkg/keeper).
const keepersWork = true

// nativeKeeperDeath: the kernel tells a keeper of the daemon's death (the
// parent-death signal, Linux); elsewhere a keeper watches its death socket.
const nativeKeeperDeath = runtime.GOOS == "linux"

// signalKeeper tells a keeper to end everything now.
func signalKeeper(pid int) {
	if pid > 0 {
		syscall.Kill(pid, keeper.Stop)
	}
}
