package supervisor

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

// nativeKeeperDeath: the kernel tells a keeper of the daemon's death.
const nativeKeeperDeath = true

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

// setKeeperSignal: the daemon's death sends the keeper keeperStop.
func setKeeperSignal(a *syscall.SysProcAttr) { a.Pdeathsig = keeperStop }

// descendants lists every process below pid, from /proc's parent links.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	kids := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		kids[ppid] = append(kids[ppid], p)
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
