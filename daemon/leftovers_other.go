//go:build !unix

package daemon

// RemoveLeftovers: no daemon leaves a socket off Unix (none is served
// there yet), so there is nothing to remove.
func RemoveLeftovers(pid int, socket, ready string) []string { return nil }
