//go:build !linux

package mcplocal

import (
	"context"
	"io"

	"github.com/hearth-mcp/hearth/pkg/localsock"
)

// ServeConn serves one accepted connection. Descriptor passing (decision
// 0020) needs Linux's memfd: every connection here is an ordinary one.
func (t *Transport) ServeConn(ctx context.Context, c *localsock.Conn) {
	t.serveSocket(ctx, c, nil)
}

// stdioInput is the stdio daemon's stdin as it is, off Linux.
func stdioInput(in io.ReadCloser) io.ReadCloser { return in }
