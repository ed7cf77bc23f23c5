package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// A control method answers the user's own client of the socket only: a
// shim's connection (relayed or handed over), a stdio daemon's client and
// an HTTP client are MCP clients, whose requests never reach it.
func TestControlOnlyOnTheSocket(t *testing.T) {
	var calls atomic.Int32
	srv, _ := newTestServer(t, Options{Control: map[string]ControlFunc{
		"$/hearth/test": func(_ context.Context, params json.RawMessage) (any, error) {
			calls.Add(1)
			var p struct{ Fail bool }
			json.Unmarshal(params, &p)
			if p.Fail {
				return nil, &jsonrpc.Error{Code: -32099, Message: "told to fail"}
			}
			return map[string]string{"done": "yes"}, nil
		},
		"$/hearth/plain": func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("plain error") },
	}})
	for _, tc := range []struct {
		name, transport string
		hello           bool
		served          bool
	}{
		{"the socket's own client", "socket", false, true},
		{"a relaying shim", "socket", true, false},
		{"a shim that handed its client's stdio over", "direct", true, false},
		{"a stdio daemon's client", "stdio", false, false},
		{"an HTTP client", "http", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := calls.Load()
			c := startSessionConn(t, srv, func(conn *Conn) { conn.Transport = tc.transport })
			if tc.hello {
				c.send(`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{"cwd":"/","pid":1,"version":"test"}}`)
			}
			c.initialize()
			c.send(`{"jsonrpc":"2.0","id":1,"method":"$/hearth/test","params":{}}`)
			r := c.recvResponse()
			if !tc.served {
				if errCode(r) != jsonrpc.CodeMethodNotFound || calls.Load() != before {
					t.Fatalf("%s reached a control method: %v", tc.transport, r)
				}
				return
			}
			if res, _ := r["result"].(map[string]any); res["done"] != "yes" || calls.Load() != before+1 {
				t.Fatalf("control: %v", r)
			}
			c.send(`{"jsonrpc":"2.0","id":2,"method":"$/hearth/test","params":{"fail":true}}`)
			if r := c.recvResponse(); errCode(r) != -32099 || r["error"].(map[string]any)["message"] != "told to fail" {
				t.Fatalf("a control error keeps its code: %v", r)
			}
			c.send(`{"jsonrpc":"2.0","id":3,"method":"$/hearth/plain","params":{}}`)
			if r := c.recvResponse(); errCode(r) != jsonrpc.CodeInvalidParams || r["error"].(map[string]any)["message"] != "plain error" {
				t.Fatalf("a plain error is invalid params: %v", r)
			}
			c.send(`{"jsonrpc":"2.0","id":4,"method":"$/hearth/other","params":{}}`)
			if r := c.recvResponse(); errCode(r) != jsonrpc.CodeMethodNotFound {
				t.Fatalf("an unknown control method: %v", r)
			}
		})
	}
}
