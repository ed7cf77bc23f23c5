//go:build !unix

package daemon

// RemoveLeftovers: off Unix nothing is removed for a dead owner. On
// Windows the next daemon removes a dead one's socket under the socket's
// lock (removeStale), and a readiness file left behind is rewritten when
// it is ready.
func RemoveLeftovers(pid int, socket, ready string) []string { return nil }
