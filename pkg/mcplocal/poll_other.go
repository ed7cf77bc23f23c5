//go:build !unix

package mcplocal

import "syscall"

// socketWriteReady: without poll(2), nil, which mcp.Conn reads as "never
// known to be ready" (every reply goes through the writer queue).
func socketWriteReady(c syscall.Conn) func(n int) bool { return nil }

// hungUp: poll(2) is Unix's. Off Unix a session whose client half-closed
// ends when its replies fail to write instead (mcp.ErrWriteFailed).
func hungUp(fd int) bool { return false }
