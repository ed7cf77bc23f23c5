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
	b, _ := json.Marshal(c)
	var back Carried
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var sent []string
	heir := New(Options{Name: "testserver"})
	heir.Adopt(WriteFunc(func(f []byte) error {
		mu.Lock()
		sent = append(sent, string(f))
		mu.Unlock()
		return nil
	}), back)
	rc2 := &rawClient{t: t, frames: make(chan string, 256)}
	rc2.c = heir.Attach(chanPeer(rc2.frames), nil)
	rc2.send(strings.Replace(initReq, "%s", "0", 1))
	m := rc2.response()
	res, _ := json.Marshal(m["result"])
	var want any
	json.Unmarshal(back.InitResult, &want)
	if wb, _ := json.Marshal(want); string(wb) != string(res) {
		t.Fatalf("initialize after the hand-over: %s, want %s", res, wb)
	}
	rc2.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	rc2.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	var frames string
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(frames, `"tools/call"`) && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		frames = strings.Join(sent, "\n")
		mu.Unlock()
	}
	if strings.Contains(frames, `"initialize"`) || !strings.Contains(frames, `"tools/call"`) {
		t.Fatalf("the adopted upstream was sent: %s", frames)
	}
	// The call is in flight to the adopted upstream: not carried again.
	if _, err := heir.Carry(); !errors.Is(err, ErrNotCarried) {
		t.Fatalf("carried with a call in flight: %v", err)
	}
}
