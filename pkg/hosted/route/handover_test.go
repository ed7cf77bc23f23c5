package route

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// A ready upstream is carried with its initialize, ids and level; the
// adopting router answers a new client's initialize with the carried
// result and sends the upstream no initialize; an upstream not ready, or
// a client's request in flight, is not carried.
func TestCarriedUpstreamIsNotInitializedAgain(t *testing.T) {
	h := newHarness(t, newTestServer().srv, Options{})
	if _, err := h.r.Carry(); !errors.Is(err, ErrNotCarried) {
		t.Fatalf("carried with no upstream: %v", err)
	}
	rc := h.raw()
	rc.initialize()
	rc.send(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`)
	if m := rc.response(); m["result"] == nil {
		t.Fatalf("setLevel: %s", m["_text"])
	}
	c, err := h.r.Carry()
	if err != nil {
		t.Fatal(err)
	}
	if c.Level != "debug" || c.NextID < 2 || !strings.Contains(string(c.InitResult), `"protocolVersion"`) || c.InitParams == nil {
		t.Fatalf("carried %+v", c)
	}
	heir, upstream := adopted(t, Options{Name: "testserver"}, c)
	rc2 := &rawClient{t: t, frames: make(chan string, 256)}
	rc2.c = heir.Attach(chanPeer(rc2.frames), nil)
	rc2.send(strings.Replace(initReq, "%s", "0", 1))
	m := rc2.response()
	res, _ := json.Marshal(m["result"])
	var want any
	json.Unmarshal(c.InitResult, &want)
	if wb, _ := json.Marshal(want); string(wb) != string(res) {
		t.Fatalf("initialize after the hand-over: %s, want %s", res, wb)
	}
	rc2.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	rc2.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	var frames string
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(frames, `"tools/call"`) && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		frames = upstream()
	}
	if strings.Contains(frames, `"initialize"`) || !strings.Contains(frames, `"tools/call"`) {
		t.Fatalf("the adopted upstream was sent: %s", frames)
	}
	// The call is in flight to the adopted upstream: not carried again.
	if _, err := heir.Carry(); !errors.Is(err, ErrNotCarried) {
		t.Fatalf("carried with a call in flight: %v", err)
	}
}

// A client that a drain parks keeps its subscription and log level across
// the hand-over: the old router sends no unsubscribe as it parks, the
// heir gives them back to the client attaching under the same tag without
// a second subscribe or setLevel, routes the upstream's
// notifications/resources/updated to it, and unsubscribes the upstream
// only once its last subscriber, parked or attached, lets go.
func TestParkedSubscriptionIsResumedWithoutASecondSubscribe(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a := h.raw()
	a.c.Resume("shim:1")
	a.initialize()
	a.send(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///x"}}`)
	if m := a.response(); m["result"] == nil {
		t.Fatalf("subscribe: %s", m["_text"])
	}
	a.send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	if m := a.response(); m["result"] == nil {
		t.Fatalf("setLevel: %s", m["_text"])
	}
	a.c.Park()
	// Everything the old router sent is answered once Carry finds nothing in
	// flight; the upstream saw one subscribe and no unsubscribe.
	var c Carried
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if c, err = h.r.Carry(); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	ts.mu.Lock()
	seen := strings.Join(ts.subs, " ")
	ts.mu.Unlock()
	if seen != "+file:///x" {
		t.Fatalf("the upstream saw %q, want one subscribe", seen)
	}
	if strings.Join(c.Subscribed, " ") != "file:///x" || c.Level != "debug" || len(c.Clients) != 1 ||
		strings.Join(c.Clients["shim:1"].Subscribed, " ") != "file:///x" || c.Clients["shim:1"].Level != "debug" {
		t.Fatalf("carried %+v", c)
	}
	heir, upstream := adopted(t, Options{Name: "testserver", Mode: Shared}, c)
	attach := func(tag string) *rawClient {
		rc := &rawClient{t: t, frames: make(chan string, 256)}
		rc.c = heir.Attach(chanPeer(rc.frames), nil)
		rc.c.Resume(tag)
		rc.send(strings.Replace(initReq, "%s", "0", 1))
		if m := rc.response(); m["result"] == nil {
			t.Fatalf("initialize: %s", m["_text"])
		}
		rc.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return rc
	}
	a2 := attach("shim:1")
	other := attach("shim:2")
	heir.FromUpstream([]byte(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///x"}}`))
	if m := a2.next(); m["method"] != "notifications/resources/updated" {
		t.Fatalf("the resumed subscriber got %s", m["_text"])
	}
	other.quiet(50 * time.Millisecond)
	// A second subscriber: answered here.
	other.send(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///x"}}`)
	if m := other.response(); m["result"] == nil {
		t.Fatalf("subscribe: %s", m["_text"])
	}
	a2.send(`{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{"uri":"file:///x"}}`)
	if m := a2.response(); m["result"] == nil {
		t.Fatalf("unsubscribe: %s", m["_text"])
	}
	if up := upstream(); strings.Contains(up, "subscribe") || strings.Contains(up, "setLevel") {
		t.Fatalf("the adopted upstream was sent: %s", up)
	}
	// The last subscriber lets go: now the upstream is unsubscribed.
	other.send(`{"jsonrpc":"2.0","id":2,"method":"resources/unsubscribe","params":{"uri":"file:///x"}}`)
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(upstream(), `"resources/unsubscribe"`); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no unsubscribe reached the upstream: %s", upstream())
		}
	}
	if n := strings.Count(upstream(), `"resources/subscribe"`); n != 0 {
		t.Fatalf("the upstream was subscribed again %d times", n)
	}
}

// What a client parked by the previous daemon held is kept for its return
// for ParkFor only: a client that does not come back (its window closed
// during the hand-over) no longer holds the upstream subscribed after the
// last attached subscriber is gone, nor its level verbose, and a later
// client that is given the same tag (a shim given a reused pid) gets
// nothing of it.
func TestParkedClientThatDoesNotReturnIsReleased(t *testing.T) {
	heir, upstream := adopted(t, Options{Name: "testserver", Mode: Shared, ParkFor: 20 * time.Millisecond}, Carried{
		InitParams: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hearth","version":"1"}}`),
		InitResult: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"resources":{"subscribe":true},"logging":{}},"serverInfo":{"name":"testserver","version":"1"}}`),
		NextID:     10,
		Level:      "debug",
		Subscribed: []string{"file:///x"},
		Clients:    map[string]CarriedClient{"shim:1": {Subscribed: []string{"file:///x"}, Level: "debug"}},
	})
	attach := func(tag string) *rawClient {
		rc := &rawClient{t: t, frames: make(chan string, 256)}
		rc.c = heir.Attach(chanPeer(rc.frames), nil)
		rc.c.Resume(tag)
		rc.initialize()
		return rc
	}
	// An attached client asks for less: the parked one's debug holds the
	// upstream at debug while it may come back.
	other := attach("shim:2")
	other.send(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"error"}}`)
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(upstream(), `"resources/unsubscribe"`) ||
		!strings.Contains(upstream(), `"level":"error"`); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("what the parked client held was never let go of; the upstream was sent: %s", upstream())
		}
	}
	if n := strings.Count(upstream(), `"resources/unsubscribe"`); n != 1 || !strings.Contains(upstream(), `file:///x`) {
		t.Fatalf("the upstream was sent: %s", upstream())
	}
	// The same tag later: nothing to give back.
	stranger := attach("shim:1")
	heir.FromUpstream([]byte(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///x"}}`))
	stranger.quiet(50 * time.Millisecond)
}

// adopted is a successor's router that adopted what c carries, after the
// JSON round trip the record makes over the hand-over socket, and what it
// has written to the upstream so far, a frame a line.
func adopted(t *testing.T, opts Options, c Carried) (*Router, func() string) {
	t.Helper()
	b, _ := json.Marshal(c)
	var back Carried
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sent []string
	heir := New(opts)
	heir.Adopt(WriteFunc(func(f []byte) error {
		mu.Lock()
		sent = append(sent, string(f))
		mu.Unlock()
		return nil
	}), back)
	return heir, func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(sent, "\n")
	}
}
