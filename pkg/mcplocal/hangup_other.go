//go:build !unix

package mcplocal

// hungUp: poll(2) is Unix's. Off Unix a session whose client half-closed
// ends when its replies fail to write instead (mcp.ErrWriteFailed).
func hungUp(fd int) bool { return false }
