package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/tool"
)

// client is a test peer on an in-memory connection to one session.
type client struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan string
	done   chan error
	cancel context.CancelFunc
	gone   chan struct{}
}

func startSession(t *testing.T, srv *Server) *client {
	t.Helper()
	return startSessionConn(t, srv, nil)
}

// startSessionConn starts a session whose Conn edit may adjust (the
// transport's Client, say) before Serve sees it.
func startSessionConn(t *testing.T, srv *Server, edit func(*Conn)) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	c := &client{t: t, in: inW, lines: make(chan string, 10000), done: make(chan error, 1), cancel: cancel, gone: make(chan struct{})}
	// A test session plays a shim's connection over the socket (Conn.Shim)
	// unless edit says otherwise.
	conn := Conn{Reader: inR, Writer: outW, CloseRead: func() error { return inR.CloseWithError(io.EOF) }, Gone: c.gone, Shim: true}
	if edit != nil {
		edit(&conn)
	}
	go func() {
		c.done <- srv.Serve(ctx, conn)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 4<<20), 4<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() { inW.Close(); cancel() })
	return c
}

// hangUp plays the transport seeing the peer go away for good.
func (c *client) hangUp() { close(c.gone) }

// served waits for Serve to return and gives its error.
func (c *client) served() error {
	c.t.Helper()
	select {
	case err := <-c.done:
		return err
	case <-time.After(20 * time.Second):
		c.t.Fatal("Serve did not return within 20s")
	}
	return nil
}

// noMoreFrames asserts the connection's output ends (Serve returned) with
// no frame left unread.
func (c *client) noMoreFrames() {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if ok {
			c.t.Fatalf("unexpected frame: %s", line)
		}
	case <-time.After(20 * time.Second):
		c.t.Fatal("the connection's output did not end within 20s")
	}
}

func (c *client) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func (c *client) sendf(format string, args ...any) {
	c.t.Helper()
	c.send(fmt.Sprintf(format, args...))
}

// recv returns the next frame, decoded; it fails the test rather than hang.
func (c *client) recv() map[string]any {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatal("connection closed while waiting for a frame")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			c.t.Fatalf("frame is not JSON: %q", line)
		}
		return m
	case <-time.After(20 * time.Second):
		c.t.Fatal("no frame within 20s")
	}
	return nil
}

// recvResponse skips notifications and returns the next response.
func (c *client) recvResponse() map[string]any {
	c.t.Helper()
	for {
		m := c.recv()
		if _, isNote := m["method"]; !isNote {
			return m
		}
	}
}

func (c *client) initialize() {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	if r := c.recv(); r["result"] == nil {
		c.t.Fatalf("initialize failed: %v", r)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func errCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	if e == nil {
		return 0
	}
	f, _ := e["code"].(float64)
	return int(f)
}

// toolPayload returns a tools/call result's structured content and isError.
func toolPayload(t *testing.T, m map[string]any) (map[string]any, bool) {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("not a result: %v", m)
	}
	content := res["content"].([]any)
	text := content[0].(map[string]any)["text"].(string)
	var payload map[string]any
	if err := json.Unmarshal([]byte(text), &payload); err != nil {
		t.Fatalf("content[0].text is not JSON: %q", text)
	}
	isErr, _ := res["isError"].(bool)
	return payload, isErr
}

// testTools is a registry of tools that exercise the protocol layer.
type testTools struct {
	mu      sync.Mutex
	started map[string]int
	release chan struct{}
	gates   map[string]chan struct{}
}

// gate returns the named gate the "wait", "plain_wait" and "stubborn" tools
// wait on; open releases them.
func (tt *testTools) gate(name string) chan struct{} {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	g := tt.gates[name]
	if g == nil {
		g = make(chan struct{})
		tt.gates[name] = g
	}
	return g
}

func (tt *testTools) open(name string) { close(tt.gate(name)) }

func (tt *testTools) start(name string) {
	tt.mu.Lock()
	tt.started[name]++
	tt.mu.Unlock()
}

func (tt *testTools) count(name string) int {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.started[name]
}

const objSchema = `{"type":"object","additionalProperties":false,"properties":{%s}}`

func schema(props string) json.RawMessage { return json.RawMessage(fmt.Sprintf(objSchema, props)) }

func newTestServer(t *testing.T, opts Options) (*Server, *testTools) {
	t.Helper()
	tt := &testTools{started: map[string]int{}, release: make(chan struct{}), gates: map[string]chan struct{}{}}
	reg := tool.NewRegistry("test+0")
	add := func(tl tool.Tool) {
		if tl.SchemaVersion == 0 {
			tl.SchemaVersion = 1
		}
		if tl.Description == "" {
			tl.Description = "test tool " + tl.Name
		}
		if tl.InputSchema == nil {
			tl.InputSchema = schema("")
		}
		if err := reg.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	add(tool.Tool{Name: "echo", InputSchema: schema(`"text":{"type":"string","maxLength":100000,"description":"what to echo"},"n":{"type":"integer","description":"a number"},"gain":{"type":"number","maximum":1,"description":"a bounded number"}`),
		Handler: func(ctx context.Context, c *tool.Call) (any, error) {
			tt.start("echo")
			var a struct {
				Text string `json:"text"`
				N    *int64 `json:"n"`
			}
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			if a.N != nil {
				return map[string]any{"text": a.Text, "n": *a.N}, nil
			}
			return map[string]any{"text": a.Text}, nil
		}})
	add(tool.Tool{Name: "sleep", InputSchema: schema(`"ms":{"type":"integer","description":"how long"},"id":{"type":"string","description":"a tag"}`),
		Handler: func(ctx context.Context, c *tool.Call) (any, error) {
			var a struct {
				MS int    `json:"ms"`
				ID string `json:"id"`
			}
			_ = c.Bind(&a)
			tt.start("sleep")
			select {
			case <-time.After(time.Duration(a.MS) * time.Millisecond):
				return map[string]any{"slept": a.MS, "id": a.ID}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}})
	add(tool.Tool{Name: "block", Timeout: time.Hour,
		Handler: func(ctx context.Context, c *tool.Call) (any, error) {
			tt.start("block")
			select {
			case <-tt.release:
				return map[string]any{"released": true}, nil
			case <-ctx.Done():
				tt.start("block_cancelled")
				return nil, ctx.Err()
			}
		}})
	// wait, plain_wait and stubborn mark "<tool>:<gate>" started, then wait
	// for the gate; stubborn ignores its context.
	waitOn := func(name string, stubborn bool) tool.Handler {
		return func(ctx context.Context, c *tool.Call) (any, error) {
			var a struct {
				Gate string `json:"gate"`
			}
			_ = c.Bind(&a)
			tt.start(name + ":" + a.Gate)
			if stubborn {
				<-tt.gate(a.Gate)
				return map[string]any{"gate": a.Gate}, nil
			}
			select {
			case <-tt.gate(a.Gate):
				return map[string]any{"gate": a.Gate}, nil
			case <-ctx.Done():
				tt.start(name + ":" + a.Gate + ":cancelled")
				return nil, ctx.Err()
			}
		}
	}
	gateArg := schema(`"gate":{"type":"string","description":"the gate to wait for"}`)
	add(tool.Tool{Name: "wait", Timeout: time.Hour, InputSchema: gateArg, Handler: waitOn("wait", false)})
	add(tool.Tool{Name: "plain_wait", PlainMethod: true, Timeout: time.Hour, InputSchema: gateArg, Handler: waitOn("plain_wait", false)})
	add(tool.Tool{Name: "stubborn", Timeout: time.Hour, InputSchema: gateArg, Handler: waitOn("stubborn", true)})
	add(tool.Tool{Name: "slow_timeout", Timeout: 50 * time.Millisecond, TimeoutArg: "timeout_ms",
		InputSchema: schema(`"timeout_ms":{"type":"integer","minimum":1,"description":"limit"}`),
		Handler: func(ctx context.Context, c *tool.Call) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}})
	add(tool.Tool{Name: "panic", Handler: func(ctx context.Context, c *tool.Call) (any, error) {
		panic("boom")
	}})
	add(tool.Tool{Name: "store_down", Handler: func(ctx context.Context, c *tool.Call) (any, error) {
		return nil, fmt.Errorf("add: %w", tool.StoreUnavailable("SQLite"))
	}})
	add(tool.Tool{Name: "not_found", Handler: func(ctx context.Context, c *tool.Call) (any, error) {
		return nil, tool.Errorf(tool.NotFound, "no such thing").With("hint", "make one")
	}})
	add(tool.Tool{Name: "secret_fail", Handler: func(ctx context.Context, c *tool.Call) (any, error) {
		return nil, fmt.Errorf("dial postgres://user:hunter2@db/x: refused")
	}})
	add(tool.Tool{Name: "progress", InputSchema: schema(`"steps":{"type":"integer","description":"how many"},"every_ms":{"type":"integer","description":"pause"}`),
		Handler: func(ctx context.Context, c *tool.Call) (any, error) {
			var a struct {
				Steps   int `json:"steps"`
				EveryMS int `json:"every_ms"`
			}
			_ = c.Bind(&a)
			for i := 1; i <= a.Steps; i++ {
				c.Progress(float64(i), float64(a.Steps), "step")
				c.Progress(float64(i)-0.5, float64(a.Steps), "going backwards is dropped")
				time.Sleep(time.Duration(a.EveryMS) * time.Millisecond)
			}
			return map[string]any{"steps": a.Steps}, nil
		}})
	add(tool.Tool{Name: "logger", Handler: func(ctx context.Context, c *tool.Call) (any, error) {
		c.Log(tool.LevelDebug, "t", "debug line")
		c.Log(tool.LevelError, "t", "error line")
		return map[string]any{}, nil
	}})
	add(tool.Tool{Name: "plain", PlainMethod: true, InputSchema: schema(`"x":{"type":"integer","description":"a number"}`),
		Handler: func(ctx context.Context, c *tool.Call) (any, error) {
			var a struct{ X int }
			_ = c.Bind(&a)
			return map[string]any{"ok": true, "x": a.X}, nil
		}})
	add(tool.Tool{Name: "whoami", Handler: func(ctx context.Context, c *tool.Call) (any, error) {
		return map[string]any{"cwd": c.Client.Cwd, "roots": c.Client.Roots}, nil
	}})
	if opts.Registry == nil {
		opts.Registry = reg
	}
	return New(opts), tt
}
