// Package keeper is the hosted upstream's keeper, a program of its own that
// the daemon's executable runs in a mode (docs/decisions/0043-keeper-subreaper.md):
// it starts the upstream in a process group of its own, becomes a child
// subreaper where there is one (Linux) and otherwise tracks the upstream's
// descendants from the process table (decision 0049), and ends them all
// when the upstream exits, when it is told to stop, or when every daemon
// holding its death socket is gone. This package holds the program (Main)
// and the protocol the daemon's supervisor (pkg/supervisor) speaks with
// it: the variables it is started with, the stop signal and the bytes of a
// hand-over on the death socket (decision 0046).
package keeper

import "runtime"

// Env, set in a process's environment, makes Main run the keeper: the
// supervisor starts the daemon's executable with it, and Main, the first
// thing that executable's main does, sees it and runs the keeper instead of
// the program. Its value is how the keeper learns of the daemon's death.
const Env = "HEARTH_KEEPER"

// The keeper's two ways of learning that the daemon died (Env's value): the
// kernel's parent-death signal (Linux), or the end of its death socket,
// whose other end only daemons hold (every Unix).
const (
	BySignal = "signal"
	ByPipe   = "pipe"
)

// DescendantsEnv names how a keeper finds the upstream's descendants that
// left its process group: as a child subreaper, to which they are
// reparented (Linux), or by its tracker, which records them from the
// system's process table (docs/decisions/0049-descendant-tracker.md). The
// supervisor chooses; the keeper's environment shows what it was told.
const DescendantsEnv = "HEARTH_KEEPER_DESCENDANTS"

const (
	BySubreaper = "subreaper"
	ByTracker   = "tracker"
)

// DescendantsMode: only Linux has a child subreaper; native false (the
// portable switch, pkg/portable) makes a Linux keeper track, as elsewhere.
func DescendantsMode(native bool) string {
	if runtime.GOOS == "linux" && native {
		return BySubreaper
	}
	return ByTracker
}

// The bytes of the hand-over on a keeper's death socket
// (docs/decisions/0046-upstream-handover.md): the daemon writes HandOver,
// the keeper disarms its parent-death signal and answers HandedOver.
const (
	HandOver   = 'h'
	HandedOver = 'k'
)
