package supervisor

import (
	"github.com/hearth-mcp/hearth/pkg/keeper"

	"os/exec"
	"runtime"
	"syscall"
)

// setDeathSignal makes the kernel SIGKILL a direct child when its parent
// dies, so a crashed daemon leaves no child behind.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// Pdeathsig fires when the OS thread that forked the child exits, not the
// process (go.dev/issue/27505): a child started from an ordinary goroutine
// could be killed whenever the runtime retires that thread. So every child
// is started from one goroutine locked to its thread for the daemon's life.
var spawns = make(chan spawnReq)

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

func init() {
	go func() {
		runtime.LockOSThread() // never unlocked: this thread lives as long as the daemon
		for r := range spawns {
			r.done <- r.cmd.Start()
		}
	}()
}

func start(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	spawns <- spawnReq{cmd, done}
	return <-done
}

// clearDeathSignal: a portable keeper learns of the daemon's death from its
// pipe alone (docs/decisions/0043-keeper-subreaper.md).
func clearDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = 0 }

// setKeeperSignal: the daemon's death sends the keeper keeper.Stop.
func setKeeperSignal(a *syscall.SysProcAttr) { a.Pdeathsig = keeper.Stop }
