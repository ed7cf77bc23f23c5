package keeper

import (
	"os"
	"syscall"

	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// This system's own mechanisms, in place of the common file's defaults.
func init() {
	setSubreaper = linuxSubreaper
	nameKeeper = linuxName
	disarmDeathSignal = linuxDisarm
	setChildDeathSignal = linuxChildDeathSignal
	descendants = procDescendants
}

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

// linuxSubreaper, the system's setSubreaper, makes orphaned descendants
// children of the keeper, not of init, so that the keeper sees and kills
// those that left the group with setsid or a double fork.
func linuxSubreaper() {
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// linuxName, the system's nameKeeper, names the keeper hearth-keeper in ps
// and /proc's comm, so that `pkill hearthd` or `killall hearthd` (meant for
// the daemon) leaves the keepers to act on its death.
func linuxName() { os.WriteFile("/proc/self/comm", []byte("hearth-keeper"), 0) }

// prSetPdeathsig is prctl's PR_SET_PDEATHSIG.
const prSetPdeathsig = 1

// linuxDisarm, the system's disarmDeathSignal, clears the calling thread's
// parent-death signal: a keeper handed to another daemon must outlive the
// daemon that started it.
func linuxDisarm() { syscall.RawSyscall(syscall.SYS_PRCTL, prSetPdeathsig, 0, 0) }

// linuxChildDeathSignal, the system's setChildDeathSignal, makes the kernel
// SIGKILL the upstream when the keeper dies.
func linuxChildDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// procDescendants, the system's descendants, lists every process below pid,
// from /proc's parent links.
func procDescendants(pid int) []int {
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
