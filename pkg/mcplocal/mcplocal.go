// Package mcplocal is the daemon's local transports: its Unix socket (a
// client's frames, or a relaying shim's), a shim's client served on the
// stdio the shim handed over (the direct transport, decision 0020), and a
// stdio daemon's own stdin and stdout. Each hands pkg/mcp the one
// connection type every transport does (mcp.Conn), as pkg/mcphttp does
// for Streamable HTTP; the daemon only wires them (docs/architecture.md).
package mcplocal

import (
	"bytes"
	"context"
	"errors"
	"io"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/localsock"
	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// Options are what a Transport serves with.
type Options struct {
	// Serve runs one session on a connection until it ends (the daemon's
	// mcp.Server.Serve).
	Serve func(context.Context, mcp.Conn) error
	// Log hears of refused hand-overs and connections that ended badly.
	Log *zap.Logger
}

// Transport serves local connections through Options.Serve.
type Transport struct {
	serve func(context.Context, mcp.Conn) error
	log   *zap.Logger
}

// New returns a Transport; a nil Log logs nothing.
func New(o Options) *Transport {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	return &Transport{serve: o.Serve, log: o.Log}
}

// serveSocket serves an ordinary connection: frames over the socket itself
// (a client, or a shim relaying its client's). first is what was already
// read from it.
func (t *Transport) serveSocket(ctx context.Context, c *localsock.Conn, first []byte) {
	var r io.Reader = c
	if len(first) > 0 {
		r = io.MultiReader(bytes.NewReader(first), c)
	}
	hup := newHangupWatch(r, connFD(c))
	defer hup.Close()
	err := t.serve(ctx, mcp.Conn{Reader: hup, Writer: c, CloseRead: c.CloseRead, Gone: hup.Gone(), Client: tool.Client{PID: c.Peer.PID}, Transport: "socket",
		WriteReady: socketWriteReady(c), Shim: true})
	if err != nil && !errors.Is(err, mcp.ErrWriteFailed) {
		t.log.Debug("connection ended", zap.Error(err))
	}
}

// ServeStdio serves a stdio daemon's one client on in and out until its
// input ends, its output breaks (mcp.ErrWriteFailed) or ctx ends. client
// is what the daemon knows of it (its pid and working directory).
func (t *Transport) ServeStdio(ctx context.Context, in io.ReadCloser, out io.Writer, client tool.Client) error {
	r := stdioInput(in)
	hup := newHangupWatch(r, fileFD(out))
	defer hup.Close()
	return t.serve(ctx, mcp.Conn{Reader: hup, Writer: out, CloseRead: r.Close, Gone: hup.Gone(), Client: client, Transport: "stdio"})
}
