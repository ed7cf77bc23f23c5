package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// TestProtocolAnsweredWhileCallBlocks: on an initialized connection the
// reader answers protocol methods, errors and malformed frames at once,
// while a tool call blocks.
func TestProtocolAnsweredWhileCallBlocks(t *testing.T) {
	srv, tt := newTestServer(t, Options{})
	srv.Registry().AddResources(fakeResources{})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`)
	waitFor(t, func() bool { return tt.count("block") == 1 })
	rows := []struct {
		frame string
		check func(m map[string]any) bool
	}{
		{`{"jsonrpc":"2.0","id":2,"method":"ping"}`, func(m map[string]any) bool { return m["id"] == 2.0 && m["result"] != nil }},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, func(m map[string]any) bool { return m["id"] == 3.0 && m["result"] != nil }},
		{`{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"info"}}`, func(m map[string]any) bool { return m["id"] == 4.0 && m["result"] != nil }},
		{`{"jsonrpc":"2.0","id":5,"method":"resources/list"}`, func(m map[string]any) bool { return m["id"] == 5.0 && m["result"] != nil }},
		{`{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"t://a"}}`, func(m map[string]any) bool { return m["id"] == 6.0 && m["result"] != nil }},
		{`{"jsonrpc":"2.0","id":7,"method":"resources/templates/list"}`, func(m map[string]any) bool { return m["id"] == 7.0 && m["result"] != nil }},
		{`{"jsonrpc":"2.0","id":8,"method":"no/such"}`, func(m map[string]any) bool { return m["id"] == 8.0 && errCode(m) == jsonrpc.CodeMethodNotFound }},
		{`{"jsonrpc":"2.0","id":9,"method":"initialize","params":{}}`, func(m map[string]any) bool { return m["id"] == 9.0 && errCode(m) == jsonrpc.CodeInvalidRequest }},
		{`{"jsonrpc":"2.0","id":`, func(m map[string]any) bool { return m["id"] == nil && errCode(m) == jsonrpc.CodeParseError }},
		{`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"nope"}}`, func(m map[string]any) bool { return m["id"] == 10.0 && errCode(m) == jsonrpc.CodeInvalidParams }},
		{`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","arguments":{"text":"beside"}}}`, func(m map[string]any) bool { return m["id"] == 11.0 && m["result"] != nil }},
	}
	for _, row := range rows {
		c.send(row.frame)
		if m := c.recv(); !row.check(m) {
			t.Fatalf("%s: %v", row.frame, m)
		}
	}
	if tt.count("block_cancelled") != 0 {
		t.Fatal("the blocked call was disturbed")
	}
	close(tt.release)
	if r := c.recv(); r["id"] != 1.0 || r["result"] == nil {
		t.Fatalf("the blocked call: %v", r)
	}
}

// TestCallsRunConcurrentlyAndReplyInCompletionOrder: two calls are in their
// handlers at once, and each reply leaves when it is ready.
func TestCallsRunConcurrentlyAndReplyInCompletionOrder(t *testing.T) {
	srv, tt := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"wait","arguments":{"gate":"a"}}}`)
	c.send(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"wait","arguments":{"gate":"b"}}}`)
	waitFor(t, func() bool { return tt.count("wait:a") == 1 && tt.count("wait:b") == 1 })
	if cl := srv.Clients(); len(cl) != 1 || cl[0].Running != 2 || cl[0].Waiting != 0 {
		t.Fatalf("clients: %+v", cl)
	}
	tt.open("b")
	if r := c.recv(); r["id"] != "b" || r["result"] == nil {
		t.Fatalf("b finished first: %v", r)
	}
	tt.open("a")
	if r := c.recv(); r["id"] != "a" || r["result"] == nil {
		t.Fatalf("a: %v", r)
	}
}

// TestMaxConcurrentCallsOne: with one slot the second call starts only
// when the first ends, and a waiting call that is cancelled never starts.
func TestMaxConcurrentCallsOne(t *testing.T) {
	srv, tt := newTestServer(t, Options{MaxConcurrentCalls: 1})
	c := startSession(t, srv)
	c.initialize()
	for _, g := range []string{"a", "b", "c"} {
		c.sendf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":"wait","arguments":{"gate":%q}}}`, g, g)
	}
	c.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if r := c.recv(); r["id"] != "p" {
		t.Fatalf("ping: %v", r)
	}
	waitFor(t, func() bool { return tt.count("wait:a") == 1 })
	if cl := srv.Clients(); cl[0].Running != 1 || cl[0].Waiting != 2 {
		t.Fatalf("one running, two waiting: %+v", cl[0])
	}
	if tt.count("wait:b") != 0 {
		t.Fatal("b started while a runs")
	}
	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"c"}}`)
	if r := c.recv(); r["id"] != "c" {
		t.Fatalf("c: %v", r)
	} else if p, isErr := toolPayload(t, r); !isErr || p["code"] != "CANCELLED" {
		t.Fatalf("c: %v", p)
	}
	tt.open("a")
	if r := c.recv(); r["id"] != "a" || r["result"] == nil {
		t.Fatalf("a: %v", r)
	}
	waitFor(t, func() bool { return tt.count("wait:b") == 1 })
	tt.open("b")
	if r := c.recv(); r["id"] != "b" || r["result"] == nil {
		t.Fatalf("b: %v", r)
	}
	// Once b has ended nothing is left to start; c never did.
	c.send(`{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	if r := c.recv(); r["id"] != "q" {
		t.Fatalf("q: %v", r)
	}
	if n := tt.count("wait:c"); n != 0 {
		t.Fatalf("the cancelled waiting call started (%d)", n)
	}
}

// TestPipelinedBeforeInitializeStaysOrdered: requests read before
// initialize has been answered (and everything ahead of it written) stay in
// the FIFO, in order; after that the connection is concurrent.
func TestPipelinedBeforeInitializeStaysOrdered(t *testing.T) {
	srv, tt := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"plain_wait","params":{"gate":"g"}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"t","version":"1"}}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	c.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	c.send(`{"jsonrpc":"2.0","id":`)
	waitFor(t, func() bool { return srv.Counters().Requests == 5 })
	tt.open("g")
	for _, want := range []string{"1", "2", "3", "4", "<nil>"} {
		if r := c.recv(); fmt.Sprint(r["id"]) != want {
			t.Fatalf("want %s, got %v", want, r)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait","arguments":{"gate":"h"}}}`)
	c.send(`{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	if r := c.recv(); r["id"] != 6.0 {
		t.Fatalf("the connection is concurrent now: %v", r)
	}
	tt.open("h")
	if r := c.recv(); r["id"] != 5.0 {
		t.Fatalf("5: %v", r)
	}
}

// TestGoneCancelsRunningCall: when the transport says the client has gone,
// the running call's context is cancelled, nothing is written and Serve
// returns.
func TestGoneCancelsRunningCall(t *testing.T) {
	srv, tt := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`)
	waitFor(t, func() bool { return tt.count("block") == 1 })
	c.hangUp()
	waitFor(t, func() bool { return tt.count("block_cancelled") == 1 })
	err := c.served()
	if !errors.Is(err, ErrClientGone) || !errors.Is(err, ErrWriteFailed) {
		t.Fatalf("Serve: %v", err)
	}
	c.noMoreFrames()
	if len(srv.Clients()) != 0 {
		t.Fatal("a session that ended is still listed")
	}
}

// TestGoneCancelsWaitingCall: a call waiting for a slot never starts once
// the client has gone.
func TestGoneCancelsWaitingCall(t *testing.T) {
	srv, tt := newTestServer(t, Options{MaxConcurrentCalls: 1})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	waitFor(t, func() bool { return tt.count("block") == 1 })
	waitFor(t, func() bool { cl := srv.Clients(); return len(cl) == 1 && cl[0].Waiting == 1 })
	c.hangUp()
	if err := c.served(); !errors.Is(err, ErrClientGone) {
		t.Fatalf("Serve: %v", err)
	}
	c.noMoreFrames()
	if tt.count("echo") != 0 {
		t.Fatal("the waiting call started after the client went away")
	}
}

// TestGoneDoesNotWaitPastTheGrace: a handler that ignores its context holds
// Serve for the abandon grace at most.
func TestGoneDoesNotWaitPastTheGrace(t *testing.T) {
	srv, tt := newTestServer(t, Options{AbandonGrace: 20 * time.Millisecond})
	defer tt.open("s")
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stubborn","arguments":{"gate":"s"}}}`)
	waitFor(t, func() bool { return tt.count("stubborn:s") == 1 })
	c.hangUp()
	if err := c.served(); !errors.Is(err, ErrClientGone) {
		t.Fatalf("Serve: %v", err)
	}
	c.noMoreFrames()
}

// TestGoneOnPlainConnection: the FIFO's running request is cancelled too.
func TestGoneOnPlainConnection(t *testing.T) {
	srv, tt := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"plain_wait","params":{"gate":"g"}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"plain","params":{"x":1}}`)
	waitFor(t, func() bool { return tt.count("plain_wait:g") == 1 })
	c.hangUp()
	waitFor(t, func() bool { return tt.count("plain_wait:g:cancelled") == 1 })
	if err := c.served(); !errors.Is(err, ErrClientGone) {
		t.Fatalf("Serve: %v", err)
	}
	c.noMoreFrames()
}

// breakable is a writer that fails once broken, as a socket whose peer
// stopped reading.
type breakable struct {
	w      io.Writer
	broken atomic.Bool
}

func (b *breakable) Write(p []byte) (int, error) {
	if b.broken.Load() {
		return 0, errors.New("broken pipe")
	}
	return b.w.Write(p)
}

// TestWriteFailureCancelsCalls: a failed write ends the session as a
// disconnect does.
func TestWriteFailureCancelsCalls(t *testing.T) {
	srv, tt := newTestServer(t, Options{})
	var w *breakable
	c := startSessionConn(t, srv, func(conn *Conn) {
		w = &breakable{w: conn.Writer}
		conn.Writer = w
	})
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`)
	waitFor(t, func() bool { return tt.count("block") == 1 })
	w.broken.Store(true)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	waitFor(t, func() bool { return tt.count("block_cancelled") == 1 })
	if err := c.served(); !errors.Is(err, ErrWriteFailed) || errors.Is(err, ErrClientGone) {
		t.Fatalf("Serve: %v", err)
	}
}

func TestClients(t *testing.T) {
	srv, tt := newTestServer(t, Options{})
	home := t.TempDir()
	c := startSessionConn(t, srv, func(conn *Conn) { conn.Client.PID = 4242 })
	c.sendf(`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{"cwd":"/work/x","pid":77,"shim_pid":78,"version":"0.9.1","home":%q}}`, home)
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1"}}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`)
	waitFor(t, func() bool { return tt.count("block") == 1 })

	plain := startSessionConn(t, srv, func(conn *Conn) { conn.Client.PID = 5151 })
	plain.send(`{"jsonrpc":"2.0","id":1,"method":"plain","params":{"x":1}}`)
	plain.recv()

	cl := srv.Clients()
	if len(cl) != 2 {
		t.Fatalf("clients: %+v", cl)
	}
	initd, plainInfo := cl[0], cl[1]
	if initd.Name != "claude-code" || initd.Version != "2.1" || initd.ProtocolVersion != "2025-06-18" ||
		initd.Cwd != "/work/x" || initd.PID != 77 || initd.ShimVersion != "0.9.1" || initd.Home != home ||
		initd.Running != 1 || initd.Requests != 2 || initd.Since.IsZero() || initd.Since.Location() != time.UTC {
		t.Fatalf("initd client: %+v", initd)
	}
	if plainInfo.Name != "" || plainInfo.ProtocolVersion != "" || plainInfo.ShimVersion != "" || plainInfo.PID != 5151 || plainInfo.Requests != 1 || plainInfo.Since.Before(initd.Since) {
		t.Fatalf("plain client: %+v", plainInfo)
	}
	b, _ := json.Marshal(initd)
	var keys map[string]any
	_ = json.Unmarshal(b, &keys)
	for _, k := range []string{"name", "version", "protocol_version", "cwd", "pid", "shim_version", "home", "since", "running", "waiting", "requests"} {
		if _, ok := keys[k]; !ok {
			t.Fatalf("%s lacks %q", b, k)
		}
	}
	close(tt.release)
	c.recv()
}

// TestHomeMismatch: a shim that resolves another data directory gets every
// request but ping refused with -32000 and a message saying what to set.
func TestHomeMismatch(t *testing.T) {
	home, other := t.TempDir(), t.TempDir()
	srv, tt := newTestServer(t, Options{Home: home})
	c := startSession(t, srv)
	c.sendf(`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{"cwd":"/w","pid":7,"version":"1","home":%q}}`, other)
	want := fmt.Sprintf("this hearth daemon (pid %d) serves the data directory %s, but this client resolves %s; set HEARTH_HOME (or MCP_SOCKET_PATH) so they agree",
		os.Getpid(), home, other)
	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"plain","params":{"x":1}}`,
	} {
		c.send(frame)
		r := c.recv()
		e, _ := r["error"].(map[string]any)
		if errCode(r) != -32000 || e["message"] != want {
			t.Fatalf("%s: %v", frame, r)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if r := c.recv(); r["id"] != 4.0 || r["result"] == nil {
		t.Fatalf("ping: %v", r)
	}
	if tt.count("echo") != 0 {
		t.Fatal("a refused call ran")
	}
	if cl := srv.Clients(); len(cl) != 1 || cl[0].Home != other {
		t.Fatalf("clients: %+v", cl)
	}
}

// TestHomeSameThroughSymlink: the same directory named another way (a
// symbolic link, a trailing slash) is not a mismatch.
func TestHomeSameThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "real")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	srv, _ := newTestServer(t, Options{Home: home})
	c := startSession(t, srv)
	c.sendf(`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{"home":%q}}`, link+"/")
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	if r := c.recv(); r["result"] == nil {
		t.Fatalf("tools/call: %v", r)
	}
}
