//go:build !linux

package daemon

import (
	"context"

	"github.com/hearth-mcp/hearth/pkg/localsock"
)

// serveConn serves one accepted connection. Descriptor passing (decision
// 0020) needs Linux's memfd: every connection here is an ordinary one.
func (d *Daemon) serveConn(ctx context.Context, c *localsock.Conn, p localsock.Peer) {
	d.serveSocket(ctx, c, nil, p)
}
