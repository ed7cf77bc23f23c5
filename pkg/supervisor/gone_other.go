//go:build unix && !linux

package supervisor

import "syscall"

// groupRunning reports whether any process of the group still exists
// (zombies included: without /proc they cannot be told apart).
func groupRunning(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
