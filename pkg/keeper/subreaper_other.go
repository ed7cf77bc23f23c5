//go:build !linux

package keeper

import "syscall"

// setSubreaper: no child subreaper here; orphans go to init, and the
// keeper's tracker follows them (docs/decisions/0049-descendant-tracker.md).
func setSubreaper() {}

// nameKeeper: its argv[0], hearth-keeper, names it.
func nameKeeper() {}

// setChildDeathSignal: no parent-death signal here.
func setChildDeathSignal(*syscall.SysProcAttr) {}

// descendants: a keeper here is never a subreaper (its tracker finds the
// descendants); it knows only its own children, whom its reaper waits for.
func descendants(int) []int { return nil }

// disarmDeathSignal: there is none to disarm here.
func disarmDeathSignal() {}
