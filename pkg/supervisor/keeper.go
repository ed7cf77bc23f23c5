package supervisor

import "runtime"

// The keeper is the hosted upstream's parent (docs/decisions/0043-keeper-subreaper.md):
// a mode of the daemon's own executable, so that it can be written in Go and
// become a child subreaper. The supervisor starts it with keeperEnv set;
// KeeperMain, the first thing the executable's main does, sees the variable
// and runs the keeper instead of the program.
const keeperEnv = "HEARTH_KEEPER"

// The keeper's two ways of learning that the daemon died (keeperEnv's
// value): the kernel's parent-death signal (Linux), or the end of a pipe
// whose only write end the daemon holds (every Unix).
const (
	keeperBySignal = "signal"
	keeperByPipe   = "pipe"
)

// keeperDescendantsEnv names how a keeper finds the upstream's descendants
// that left its process group: as a child subreaper, to which they are
// reparented (Linux), or by its tracker, which records them from the
// system's process table (docs/decisions/0049-descendant-tracker.md). The
// supervisor chooses; the keeper's environment shows what it was told.
const keeperDescendantsEnv = "HEARTH_KEEPER_DESCENDANTS"

const (
	descendantsBySubreaper = "subreaper"
	descendantsByTracker   = "tracker"
)

// descendantsMode: only Linux has a child subreaper; native false (the
// portable switches) makes a Linux keeper track, as elsewhere.
func descendantsMode(native bool) string {
	if runtime.GOOS == "linux" && native {
		return descendantsBySubreaper
	}
	return descendantsByTracker
}

// PortableKeeperEnv, set to 1 in the daemon's environment, makes Linux
// keepers learn of the daemon's death through the pipe, as they do where
// there is no parent-death signal, and find the upstream's descendants with
// the tracker, as where there is no subreaper, so that both ways of each can
// be tested on Linux.
// HEARTH_PORTABLE=1 (package portable) selects it too, with the other
// portable mechanisms.
const PortableKeeperEnv = "HEARTH_KEEPER_PORTABLE"

// The bytes of the hand-over on a keeper's death socket
// (docs/decisions/0046-upstream-handover.md): the daemon writes handOver,
// the keeper disarms its parent-death signal and answers handedOver.
const (
	handOver   = 'h'
	handedOver = 'k'
)
