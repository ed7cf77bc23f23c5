package route

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstreamHarness runs a go-sdk server of the test's own as a router's
// upstream, in process: a new server session each time the router wakes it,
// and a record of every frame the router sent it.
type upstreamHarness struct {
	t   *testing.T
	r   *Router
	srv *mcp.Server

	mu     sync.Mutex
	sent   []string // methods (or "response") of frames sent to the upstream
	frames []string // those frames
	starts int
	stop   func() // ends the current upstream
}

func newHarness(t *testing.T, srv *mcp.Server, opts Options) *upstreamHarness {
	h := &upstreamHarness{t: t, srv: srv}
	if opts.Name == "" {
		opts.Name = "testserver"
	}
	opts.Wake = func() { go h.start() }
	h.r = New(opts)
	t.Cleanup(func() {
		h.mu.Lock()
		stop := h.stop
		h.mu.Unlock()
		if stop != nil {
			stop()
		}
	})
	return h
}

// start connects a fresh server session and gives it to the router.
func (h *upstreamHarness) start() {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := h.srv.Connect(ctx, &mcp.IOTransport{Reader: inR, Writer: outW}, nil)
	if err != nil {
		h.t.Errorf("connect upstream: %v", err)
		cancel()
		return
	}
	h.mu.Lock()
	h.starts++
	h.stop = func() { cancel(); inW.Close(); outR.Close(); go ss.Close() }
	h.mu.Unlock()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			h.r.FromUpstream(append([]byte(nil), sc.Bytes()...))
		}
	}()
	h.r.Up(WriteFunc(func(f []byte) error {
		var m struct {
			Method string `json:"method"`
		}
		json.Unmarshal(f, &m)
		if m.Method == "" {
			m.Method = "response"
		}
		h.mu.Lock()
		h.sent = append(h.sent, m.Method)
		h.frames = append(h.frames, string(f))
		h.mu.Unlock()
		_, err := inW.Write(append(f, '\n'))
		return err
	}))
}

// count is how many frames of a method were sent to the upstream.
func (h *upstreamHarness) count(method string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.sent {
		if m == method {
			n++
		}
	}
	return n
}

// framesOf are the frames of a method sent to the upstream.
func (h *upstreamHarness) framesOf(method string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for i, m := range h.sent {
		if m == method {
			out = append(out, h.frames[i])
		}
	}
	return out
}

// settled waits until the frames queued to the upstream have been written
// (the router queues them; the count is taken as they are written).
func (h *upstreamHarness) settled() {
	time.Sleep(50 * time.Millisecond)
}

// kill ends the current upstream as a crash would, and tells the router.
func (h *upstreamHarness) kill() {
	h.mu.Lock()
	stop := h.stop
	h.stop = nil
	h.mu.Unlock()
	h.r.Down(errors.New("testserver exited (killed by signal 9)"), false)
	if stop != nil {
		stop()
	}
}

// rawClient is a client that writes and reads JSON-RPC text, to check ids
// and params byte for byte.
type rawClient struct {
	t      *testing.T
	c      *Client
	frames chan string
}

func (h *upstreamHarness) raw() *rawClient {
	rc := &rawClient{t: h.t, frames: make(chan string, 256)}
	rc.c = h.r.Attach(chanPeer(rc.frames), nil)
	return rc
}

// chanPeer delivers frames into a channel: at once while it has room
// (TryWrite), else waiting (Write), so tests take both ways out. Each is
// its label, a NUL, and the frame (next splits them).
type chanPeer chan string

func (p chanPeer) Write(f []byte, re string) error { p <- re + "\x00" + string(f); return nil }

func (p chanPeer) TryWrite(f []byte, re string) (bool, error) {
	select {
	case p <- re + "\x00" + string(f):
		return true, nil
	default:
		return false, nil
	}
}

func (rc *rawClient) send(s string) { rc.c.Handle([]byte(s)) }

// next is the next frame the client receives.
func (rc *rawClient) next() map[string]any {
	rc.t.Helper()
	select {
	case f := <-rc.frames:
		re, f, _ := strings.Cut(f, "\x00")
		var m map[string]any
		if err := json.Unmarshal([]byte(f), &m); err != nil {
			rc.t.Fatalf("frame %q: %v", f, err)
		}
		m["_text"], m["_re"] = f, re
		return m
	case <-time.After(10 * time.Second):
		rc.t.Fatal("no frame within 10s")
		return nil
	}
}

// response skips notifications up to the next response.
func (rc *rawClient) response() map[string]any {
	rc.t.Helper()
	for {
		m := rc.next()
		if _, ok := m["method"]; !ok {
			return m
		}
	}
}

// quiet checks that nothing arrives for a while.
func (rc *rawClient) quiet(d time.Duration) {
	rc.t.Helper()
	select {
	case f := <-rc.frames:
		rc.t.Fatalf("unexpected frame %s", f)
	case <-time.After(d):
	}
}

const initReq = `{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func (rc *rawClient) initialize() {
	rc.t.Helper()
	rc.send(strings.Replace(initReq, "%s", "0", 1))
	if m := rc.response(); m["result"] == nil {
		rc.t.Fatalf("initialize: %s", m["_text"])
	}
	rc.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// sdkClient connects a go-sdk client to the router.
func (h *upstreamHarness) sdkClient(opts *mcp.ClientOptions, sessOpts *mcp.ClientSessionOptions) (*mcp.ClientSession, *Client) {
	h.t.Helper()
	toRouterR, toRouterW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	c := h.r.Attach(WriteFunc(func(f []byte) error { _, err := toClientW.Write(append(f, '\n')); return err }), nil)
	go func() {
		sc := bufio.NewScanner(toRouterR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			c.Handle(append([]byte(nil), sc.Bytes()...))
		}
		c.Detach()
	}()
	cl := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := cl.Connect(ctx, &mcp.IOTransport{Reader: toClientR, Writer: toRouterW}, sessOpts)
	if err != nil {
		h.t.Fatalf("client connect: %v", err)
	}
	h.t.Cleanup(func() { cs.Close() })
	return cs, c
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
