//go:build !linux

package daemon

import (
	"context"
	"net"
)

// serveConn serves one accepted connection. Descriptor passing (decision
// 0020) needs Linux's memfd: every connection here is an ordinary one.
func (d *Daemon) serveConn(ctx context.Context, c *net.UnixConn, p peer) {
	d.serveSocket(ctx, c, nil, p)
}
