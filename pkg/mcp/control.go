package mcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// ControlFunc answers one of hearth's own control requests (Options.Control):
// its result is the reply's result; an error is the reply's error, with its
// code when it is a *jsonrpc.Error, else invalid params.
type ControlFunc func(ctx context.Context, params json.RawMessage) (any, error)

// controlFor is the control method a request names, when this connection
// may use it: only a client of the socket itself, which is the user's own
// (the socket is theirs, 0600, checked by its peer's uid), and that did
// not open as a shim. A shim's connection, relayed or handed over, carries
// an MCP client's frames; a stdio or HTTP connection is an MCP client's;
// none of them reaches it, whatever its client sends (the surface is
// decided once, session.go), so what a model may ask for stays in
// tools/call.
func (s *registry) controlFor(method string) (ControlFunc, bool) {
	fn, ok := s.srv.opts.Control[method]
	if !ok || s.surface() != ownClient {
		return nil, false
	}
	return fn, true
}

// ThenReply is a control method's result whose After is to run only once
// its Result has been written to the client: a request that stops the
// daemon (a hand-over) must not stop it before its answer is out, or the
// client reads the connection's end instead.
type ThenReply struct {
	Result any
	After  func()
}

// control answers a control request.
func (s *registry) control(e *entry, fn ControlFunc) []byte {
	res, err := fn(s.life.base, e.params)
	if tr, ok := res.(ThenReply); ok {
		res, e.after = tr.Result, tr.After
	}
	if err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			return s.fail(e, je.Code, je.Message, je.Data)
		}
		return s.fail(e, jsonrpc.CodeInvalidParams, err.Error(), nil)
	}
	return s.result(e, res)
}
