package route

import (
	"strings"
	"testing"
	"time"
)

// A client whose input ended has its calls cancelled upstream and answered
// with an error, once; it stays attached, so the answer reaches it, and the
// upstream's late answer is dropped.
func TestEndInputCancelsAndAnswers(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a, b := h.raw(), h.raw()
	a.initialize()
	b.initialize()
	a.send(callFrame("7", "wait", `{"key":"eof"}`))
	ts.waitStarted("eof")
	a.c.EndInput("cancelled: the client closed its input")
	m := a.response()
	if m["id"] != float64(7) || !strings.Contains(m["_text"].(string), `"code":-32800`) || !strings.Contains(m["_text"].(string), "closed its input") {
		t.Fatalf("answer after the end of input: %s", m["_text"])
	}
	if n := a.c.Pending(); n != 0 {
		t.Fatalf("%d requests still pending", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for ts.cancelledKeys() != "eof" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := ts.cancelledKeys(); got != "eof" {
		t.Fatalf("cancelled upstream: %q", got)
	}
	a.quiet(100 * time.Millisecond) // no second answer
	b.send(callFrame("1", "echo", `{"text":"still"}`))
	if m := b.response(); textOfRaw(t, m) != "still" {
		t.Fatalf("b: %s", m["_text"])
	}
}
