package mcp

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"
)

// msgSource is a FrameSource fed one message at a time, as a transport that
// receives each message apart (an HTTP request body) feeds its session.
type msgSource struct {
	in  chan []byte
	off int64
}

func (s *msgSource) Read() ([]byte, error) {
	b, ok := <-s.in
	if !ok {
		return nil, io.EOF
	}
	s.off += int64(len(b))
	return b, nil
}
func (s *msgSource) Offset() int64 { return s.off }
func (s *msgSource) Close()        {}

// labelledFrame is one frame a sink was sent, with the request it belongs to.
type labelledFrame struct {
	frame map[string]any
	re    string
}

// recordingSink is a FrameSink that keeps every frame with its label.
type recordingSink struct {
	mu     sync.Mutex
	frames []labelledFrame
	more   chan struct{}
}

func (s *recordingSink) Send(b []byte, re string) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	s.mu.Lock()
	s.frames = append(s.frames, labelledFrame{m, re})
	s.mu.Unlock()
	select {
	case s.more <- struct{}{}:
	default:
	}
	return nil
}

func (s *recordingSink) Flush() error { return nil }

// await waits until a frame satisfying ok was sent, and returns it.
func (s *recordingSink) await(t *testing.T, what string, ok func(labelledFrame) bool) labelledFrame {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		s.mu.Lock()
		for _, f := range s.frames {
			if ok(f) {
				s.mu.Unlock()
				return f
			}
		}
		s.mu.Unlock()
		select {
		case <-s.more:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			s.mu.Lock()
			defer s.mu.Unlock()
			t.Fatalf("no %s within 10s; sent: %v", what, s.frames)
		}
	}
}

func replyTo(id any) func(labelledFrame) bool {
	return func(f labelledFrame) bool {
		_, has := f.frame["id"]
		return has && f.frame["id"] == id && f.frame["method"] == nil
	}
}

func method(name string) func(labelledFrame) bool {
	return func(f labelledFrame) bool { return f.frame["method"] == name }
}

// TestSinkLabelsFramesWithTheirRequest checks the transport seam: a session
// reads whole messages from Conn.Source, and every frame it sends to
// Conn.Sink names the request it belongs to (its reply, its progress and log
// messages, a subscription's notices), or none for the connection's own.
func TestSinkLabelsFramesWithTheirRequest(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	src := &msgSource{in: make(chan []byte, 64)}
	sink := &recordingSink{more: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, Conn{Source: src, Sink: sink, Transport: "test"}) }()
	send := func(s string) { src.in <- []byte(s) }

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	if f := sink.await(t, "initialize reply", replyTo(1.0)); f.re != "1" {
		t.Errorf("initialize reply labelled %q, want 1", f.re)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if f := sink.await(t, "roots/list request", method("roots/list")); f.re != "" {
		t.Errorf("the session's own roots/list labelled %q, want none", f.re)
	}
	send(`{"jsonrpc":"2.0","id":"hearth-roots-1","result":{"roots":[]}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	sink.await(t, "setLevel reply", replyTo(2.0))

	send(`{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"progress","arguments":{"steps":2},"_meta":{"progressToken":"tok"}}}`)
	send(`{"jsonrpc":"2.0","id":"l","method":"tools/call","params":{"name":"logger"}}`)
	if f := sink.await(t, "progress reply", replyTo("p")); f.re != `"p"` {
		t.Errorf("tools/call reply labelled %q, want p", f.re)
	}
	if f := sink.await(t, "progress notification", method("notifications/progress")); f.re != `"p"` {
		t.Errorf("progress labelled %q, want the call's key p", f.re)
	}
	sink.await(t, "logger reply", replyTo("l"))
	if f := sink.await(t, "log message", method("notifications/message")); f.re != `"l"` {
		t.Errorf("log message labelled %q, want the call's key l", f.re)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"nope"}`)
	if f := sink.await(t, "unknown method reply", replyTo(3.0)); f.re != "3" {
		t.Errorf("error reply labelled %q, want 3", f.re)
	}
	send(`{not json`)
	if f := sink.await(t, "parse error reply", func(f labelledFrame) bool {
		_, has := f.frame["id"]
		return has && f.frame["id"] == nil
	}); f.re != "" {
		t.Errorf("reply to a frame without an id labelled %q, want none", f.re)
	}
	srv.ListChanged(true, false)
	if f := sink.await(t, "list change", method("notifications/tools/list_changed")); f.re != "" {
		t.Errorf("a legacy session's list change labelled %q, want none", f.re)
	}
	close(src.in)
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// TestSinkLabelsSubscriptionNotices checks a modern subscription: its
// acknowledgement and the list changes it asked for belong to the listen
// request, and so does the result that ends it on a drain.
func TestSinkLabelsSubscriptionNotices(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	src := &msgSource{in: make(chan []byte, 64)}
	sink := &recordingSink{more: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var stopOnce sync.Once
	stopReading := func() error { stopOnce.Do(func() { close(src.in) }); return nil }
	go func() {
		done <- srv.Serve(ctx, Conn{Source: src, Sink: sink, Transport: "test", CloseRead: stopReading})
	}()
	src.in <- []byte(`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if f := sink.await(t, "acknowledgement", method("notifications/subscriptions/acknowledged")); f.re != `"sub"` {
		t.Errorf("acknowledgement labelled %q, want sub", f.re)
	}
	srv.ListChanged(true, false)
	if f := sink.await(t, "list change", method("notifications/tools/list_changed")); f.re != `"sub"` {
		t.Errorf("subscription's list change labelled %q, want sub", f.re)
	}
	cancel() // a drain ends the subscription with its result
	if f := sink.await(t, "end of the subscription", replyTo("sub")); f.re != `"sub"` {
		t.Errorf("subscription's end labelled %q, want sub", f.re)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
