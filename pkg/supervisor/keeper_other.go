//go:build unix && !linux

package supervisor

import "syscall"

// nativeKeeperDeath: no parent-death signal here; a keeper watches the
// daemon's pipe.
const nativeKeeperDeath = false

// setSubreaper: no child subreaper here; orphans go to init, out of the
// keeper's reach (the process group kill still reaches those that stayed in
// it).
func setSubreaper() {}

// nameKeeper: its argv[0], hearth-keeper, names it.
func nameKeeper() {}

func setKeeperSignal(*syscall.SysProcAttr) {}

// descendants: without /proc the keeper knows only its own children, whom
// its reaper waits for.
func descendants(int) []int { return nil }

// disarmDeathSignal: there is none to disarm here.
func disarmDeathSignal() {}
