//go:build !unix

package mcplocal

import "syscall"

// socketWriteReady: without poll(2), nil, which mcp.Conn reads as "never
// known to be ready" (every reply goes through the writer queue).
func socketWriteReady(c syscall.Conn) func(n int) bool { return nil }
