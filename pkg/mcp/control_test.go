package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// What a connection may send is decided once, by how it arrived and by its
// first frame; nothing its client sends later changes it. A relaying
// shim's client that says hello itself (a hello with no version, as a
// shim's first would have) neither resets the connection to the socket's
// own client, so it never reaches a control method, nor names a hosted
// server, a directory or a data directory; nor does a hello over
// handed-over stdio, nor one that is not a socket connection's first frame
// (that client stays the socket's own, with its control methods).
func TestSurfaceDecidedOnce(t *testing.T) {
	var calls, hosts atomic.Int32
	srv, _ := newTestServer(t, Options{
		Control: map[string]ControlFunc{"$/hearth/test": func(context.Context, json.RawMessage) (any, error) {
			calls.Add(1)
			return map[string]string{"done": "yes"}, nil
		}},
		Host: func(req HostRequest, w Writer, gone func(error)) (Dispatcher, error) {
			hosts.Add(1)
			return newRefused(errNoHosting, w.Write), nil
		},
	})
	shimHello := `{"jsonrpc":"2.0","method":"$/hearth/hello","params":{"cwd":"/shim","pid":7,"version":"test"}}`
	for _, tc := range []struct {
		name, transport string
		frames          []string
	}{
		{"a relaying shim's client says hello", "socket", []string{shimHello,
			`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{}}`}},
		{"a relaying shim's client says hello with a run", "socket", []string{shimHello,
			`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{"cwd":"/evil","pid":9,"run":{"command":"/bin/sh"}}}`}},
		{"a handed-over client says hello", "direct", []string{shimHello,
			`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{}}`}},
		{"a socket client says hello after its first frame", "socket", []string{
			`{"jsonrpc":"2.0","id":"first","method":"ping"}`,
			`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{"cwd":"/evil","pid":9,"run":{"command":"/bin/sh"}}}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls.Store(0)
			hosts.Store(0)
			c := startSessionConn(t, srv, func(conn *Conn) { conn.Transport = tc.transport })
			for _, f := range tc.frames {
				c.send(f)
			}
			if strings.Contains(tc.frames[0], `"ping"`) {
				c.recvResponse()
			}
			c.initialize()
			c.send(`{"jsonrpc":"2.0","id":1,"method":"$/hearth/test","params":{}}`)
			r := c.recvResponse()
			if own := tc.frames[0] != shimHello; own {
				// The socket's own client stays one: its control answers.
				if calls.Load() != 1 {
					t.Fatalf("the socket's own client lost its control method: %v", r)
				}
			} else if errCode(r) != jsonrpc.CodeMethodNotFound || calls.Load() != 0 {
				t.Fatalf("a control method was reached: %v", r)
			}
			if hosts.Load() != 0 {
				t.Fatalf("a later hello reached the host")
			}
			for _, cl := range srv.Clients() {
				if cl.Cwd == "/evil" || cl.PID == 9 {
					t.Fatalf("a later hello was taken: %+v", cl)
				}
				if tc.transport == "socket" && tc.frames[0] == shimHello && cl.Transport != "relay" {
					t.Fatalf("the relaying shim's connection reads as %q", cl.Transport)
				}
			}
		})
	}
}

// A control method whose effect ends the session (a hand-over stops the
// daemon) runs that effect only once its answer is written: the client
// reads the answer, then the end.
func TestControlThenReplyRunsAfterTheAnswer(t *testing.T) {
	var mu sync.Mutex
	var events []string
	srv, _ := newTestServer(t, Options{Control: map[string]ControlFunc{
		"$/hearth/stop": func(context.Context, json.RawMessage) (any, error) {
			return ThenReply{Result: map[string]int{"pid": 7}, After: func() {
				mu.Lock()
				events = append(events, "after")
				mu.Unlock()
			}}, nil
		},
	}})
	c := startSessionConn(t, srv, func(conn *Conn) {
		conn.Transport = "socket"
		w := conn.Writer
		conn.Writer = writerFunc(func(p []byte) (int, error) {
			if strings.Contains(string(p), `"pid":7`) {
				mu.Lock()
				events = append(events, "answer")
				mu.Unlock()
			}
			return w.Write(p)
		})
	})
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"$/hearth/stop","params":{}}`)
	if r := c.recvResponse(); r["result"] == nil || r["result"].(map[string]any)["pid"] != float64(7) {
		t.Fatalf("the answer: %v", r)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		got := strings.Join(events, ",")
		mu.Unlock()
		if got == "answer,after" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("events %q, want the answer written before the effect", got)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
