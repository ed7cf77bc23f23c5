//go:build !linux

package mcplocal

import "io"

// stdioInput is the stdio daemon's stdin as it is, off Linux.
func stdioInput(in io.ReadCloser) io.ReadCloser { return in }
