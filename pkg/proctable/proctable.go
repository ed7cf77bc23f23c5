// Package proctable lists the system's processes: each one's pid, its
// parent's pid, its process group, its start time and whether it is stopped or a zombie. It is
// the thin system-call layer under a hosted upstream's descendant tracker
// (docs/decisions/0049-descendant-tracker.md): /proc on Linux, sysctl
// kern.proc.all on macOS, an error elsewhere.
package proctable

// Proc is one process as the table showed it.
type Proc struct {
	Pid, PPid int
	Pgid      int // its process group
	// Start is the process's start time in the system's own unit (clock
	// ticks since boot on Linux, microseconds since the epoch on macOS):
	// with Pid it names one process, never a later one given the same pid.
	Start uint64
	// Stopped: stopped by a signal (SIGSTOP). Zombie: dead, not yet reaped.
	Stopped, Zombie bool
}
