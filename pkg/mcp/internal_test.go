package mcp

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// TestInternalMethodsOnlyFromTheShim: hearth's internal methods take effect
// only on a connection that came through the daemon's own socket
// (Conn.Shim). From any other transport a hello naming a command never
// reaches Options.Host, its cwd is not taken, a tooLarge notice is not
// answered, and an internal request gets a refusal that says why; the
// session goes on serving.
func TestInternalMethodsOnlyFromTheShim(t *testing.T) {
	var hosts atomic.Int32
	host := func(req HostRequest, w Writer, gone func(error)) (Dispatcher, error) {
		hosts.Add(1)
		return newRefused(errNoHosting, w.Write), nil
	}
	internal := []string{
		`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{"cwd":"/tmp/evil","pid":9,"run":{"command":"/bin/sh","args":["-c","id > /tmp/pwned"]}}}`,
		`{"jsonrpc":"2.0","method":"$/hearth/tooLarge"}`,
		`{"jsonrpc":"2.0","method":"$/hearth/attach","params":{}}`,
		`{"jsonrpc":"2.0","method":"$/hearth/anything-else"}`,
	}
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			hosts.Store(0)
			srv, _ := newTestServer(t, Options{Host: host})
			c := startSessionConn(t, srv, func(conn *Conn) { conn.Shim = false; conn.Transport = transport })
			for _, f := range internal {
				c.send(f)
			}
			// The same methods as requests are refused by name.
			for i, m := range []string{"$/hearth/hello", "$/hearth/tooLarge", "$/hearth/attach"} {
				c.sendf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"run":{"command":"/bin/sh"}}}`, i+1, m)
				r := c.recv()
				e, _ := r["error"].(map[string]any)
				if e == nil || e["code"] != float64(jsonrpc.CodeMethodNotFound) || !strings.Contains(e["message"].(string), "only the hearth shim") {
					t.Fatalf("%s as a request over %s: %v", m, transport, r)
				}
			}
			c.initialize()
			c.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
			if r := c.recvResponse(); r["result"] == nil {
				t.Fatalf("ping after refusals: %v", r)
			}
			if n := hosts.Load(); n != 0 {
				t.Fatalf("a hello over %s reached the host %d times", transport, n)
			}
			for _, cl := range srv.Clients() {
				if cl.Cwd == "/tmp/evil" || cl.PID == 9 {
					t.Fatalf("a hello over %s was taken: %+v", transport, cl)
				}
			}
		})
	}

	// Over the socket the same hello attaches the session.
	hosts.Store(0)
	srv, _ := newTestServer(t, Options{Host: host})
	c := startSession(t, srv)
	c.send(internal[0])
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	r := c.recv()
	if e, _ := r["error"].(map[string]any); e == nil || e["code"] != float64(CodeHostedRefused) {
		t.Fatalf("hosted session's reply: %v", r)
	}
	if hosts.Load() != 1 {
		t.Fatalf("host called %d times over the socket", hosts.Load())
	}
}

// TestConnRunAttaches: a transport that chose the hosted server itself
// (Conn.Run) has the session attached before its first frame, with no
// hello and on a connection that is not a shim's.
func TestConnRunAttaches(t *testing.T) {
	var got atomic.Value
	host := func(req HostRequest, w Writer, gone func(error)) (Dispatcher, error) {
		got.Store(string(req.Run))
		return newRefused(errNoHosting, w.Write), nil
	}
	srv, _ := newTestServer(t, Options{Host: host})
	c := startSessionConn(t, srv, func(conn *Conn) {
		conn.Shim = false
		conn.Run = json.RawMessage(`{"name":"memory"}`)
	})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if r := c.recv(); r["error"] == nil {
		t.Fatalf("reply: %v", r)
	}
	if got.Load() != `{"name":"memory"}` {
		t.Fatalf("run: %v", got.Load())
	}
}
