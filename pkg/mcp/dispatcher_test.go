package mcp

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// echoDispatcher is a second kind of dispatcher, as a hosted server's is:
// it answers each request with its method, through the session's writer.
type echoDispatcher struct {
	w        Writer
	mu       sync.Mutex
	handled  []*jsonrpc.Message
	ended    error
	done     chan struct{}
	once     sync.Once
	detached atomic.Int32
}

func (d *echoDispatcher) Handle(msg *jsonrpc.Message, perr *jsonrpc.ParseError) {
	if perr != nil {
		d.w.Write(jsonrpc.ErrorFrame(perr.ID, perr.Err), "")
		return
	}
	d.mu.Lock()
	d.handled = append(d.handled, msg)
	d.mu.Unlock()
	if msg.Kind == jsonrpc.Request {
		res, _ := json.Marshal(map[string]string{"echo": msg.Method})
		d.w.Write(jsonrpc.ResultFrame(msg.ID, res), msg.ID.Key())
	}
}
func (d *echoDispatcher) Answer(frame []byte, re string) { d.w.Write(frame, re) }
func (d *echoDispatcher) EndInput(err error) {
	d.mu.Lock()
	d.ended = err
	d.mu.Unlock()
	d.finish()
}
func (d *echoDispatcher) Drain()                { d.finish() }
func (d *echoDispatcher) HangUp()               { d.finish() }
func (d *echoDispatcher) Done() <-chan struct{} { return d.done }
func (d *echoDispatcher) Detach()               { d.detached.Add(1) }
func (d *echoDispatcher) Status(ci *ClientInfo) { ci.Hosted = "echo" }
func (d *echoDispatcher) finish()               { d.once.Do(func() { close(d.done) }) }

// echoHost attaches every connection to a new echoDispatcher, kept in got.
func echoHost(got chan<- *echoDispatcher) HostFunc {
	return func(req HostRequest, w Writer, gone func(error)) (Dispatcher, error) {
		d := &echoDispatcher{w: w, done: make(chan struct{})}
		got <- d
		return d, nil
	}
}

// TestAnotherDispatcherOverAStream: a dispatcher other than the registry,
// chosen by the shim's hello, serves every later frame of an NDJSON
// connection; the session ends when it is done, and detaches it once.
func TestAnotherDispatcherOverAStream(t *testing.T) {
	got := make(chan *echoDispatcher, 1)
	srv, _ := newTestServer(t, Options{Host: echoHost(got)})
	c := startSession(t, srv)
	c.send(`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{"cwd":"/tmp","run":{"name":"echo"}}}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if r := c.recv(); r["id"] != float64(1) || r["result"].(map[string]any)["echo"] != "tools/list" {
		t.Fatalf("the dispatcher's reply: %v", r)
	}
	c.send(`{"jsonrpc":"2.0","method":"$/hearth/tooLarge"}`)
	if r := c.recv(); errCode(r) != jsonrpc.CodeInvalidRequest || r["error"].(map[string]any)["message"] != "payload_too_large" {
		t.Fatalf("a reply the session decided: %v", r)
	}
	d := <-got
	if cl := srv.Clients(); len(cl) != 1 || cl[0].Hosted != "echo" || cl[0].Requests != 2 {
		t.Fatalf("status: %+v", cl)
	}
	c.in.Close()
	if err := c.served(); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	ended, n := d.ended, len(d.handled)
	d.mu.Unlock()
	if ended != io.EOF || n != 1 || d.detached.Load() != 1 {
		t.Fatalf("ended %v after %d frames, detached %d times", ended, n, d.detached.Load())
	}
}

// parsedSource is a MessageSource, as an HTTP transport's: each message
// comes decoded already.
type parsedSource struct {
	in  chan *jsonrpc.Message
	off int64
}

func (s *parsedSource) ReadMessage() (*jsonrpc.Message, []byte, error) {
	m, ok := <-s.in
	if !ok {
		return nil, nil, io.EOF
	}
	s.off++
	return m, nil, nil
}
func (s *parsedSource) Read() ([]byte, error) { _, b, err := s.ReadMessage(); return b, err }
func (s *parsedSource) Offset() int64         { return s.off }
func (s *parsedSource) Close()                {}

// TestAnotherDispatcherOverMessages: the same dispatcher, chosen by the
// transport (Conn.Run), is handed the very messages the transport decoded
// (no second decode), and its frames keep their request's label.
func TestAnotherDispatcherOverMessages(t *testing.T) {
	got := make(chan *echoDispatcher, 1)
	srv, _ := newTestServer(t, Options{Host: echoHost(got)})
	src := &parsedSource{in: make(chan *jsonrpc.Message, 4)}
	sink := &recordingSink{more: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() {
		done <- srv.Serve(context.Background(), Conn{Source: src, Sink: sink, Transport: "http", Run: json.RawMessage(`{"name":"echo"}`)})
	}()
	msg, perr := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":"a","method":"ping"}`))
	if perr != nil {
		t.Fatal(perr.Err)
	}
	src.in <- msg
	if f := sink.await(t, "the dispatcher's reply", replyTo("a")); f.re != `"a"` || f.frame["result"].(map[string]any)["echo"] != "ping" {
		t.Fatalf("reply %v labelled %q", f.frame, f.re)
	}
	close(src.in)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	d := <-got
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.handled) != 1 || d.handled[0] != msg {
		t.Fatalf("the dispatcher was handed %v, not the transport's message", d.handled)
	}
}
