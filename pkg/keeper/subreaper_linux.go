package keeper

import (
	"os"
	"syscall"

	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

// setSubreaper makes orphaned descendants children of the keeper, not of
// init, so that the keeper sees and kills those that left the group with
// setsid or a double fork.
func setSubreaper() {
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// nameKeeper names the keeper hearth-keeper in ps and /proc's comm, so that
// `pkill hearthd` or `killall hearthd` (meant for the daemon) leaves the
// keepers to act on its death.
func nameKeeper() { os.WriteFile("/proc/self/comm", []byte("hearth-keeper"), 0) }

// prSetPdeathsig is prctl's PR_SET_PDEATHSIG.
const prSetPdeathsig = 1

// disarmDeathSignal clears the calling thread's parent-death signal: a
// keeper handed to another daemon must outlive the daemon that started it.
func disarmDeathSignal() { syscall.RawSyscall(syscall.SYS_PRCTL, prSetPdeathsig, 0, 0) }

// setChildDeathSignal makes the kernel SIGKILL the upstream when the keeper
// dies.
func setChildDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// descendants lists every process below pid, from /proc's parent links.
func descendants(pid int) []int {
	procs, err := proctable.List()
	if err != nil {
		return nil
	}
	kids := map[int][]int{}
	for _, p := range procs {
		kids[p.PPid] = append(kids[p.PPid], p.Pid)
	}
	var out []int
	next := kids[pid]
	for len(next) > 0 {
		p := next[0]
		next = append(next[1:], kids[p]...)
		out = append(out, p)
	}
	return out
}
