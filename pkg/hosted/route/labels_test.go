package route

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// initSampling initializes a raw client that declares sampling.
func (rc *rawClient) initSampling() {
	rc.t.Helper()
	rc.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := rc.response(); m["result"] == nil {
		rc.t.Fatalf("initialize: %s", m["_text"])
	}
	rc.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// Frames about a client's request are labelled with that request's key,
// so that Streamable HTTP sends them on its POST's stream: its progress,
// its log messages and the sampling request its call caused. What is not
// certainly one client's request is labelled with none.
func TestFramesAreLabelledWithTheirRequest(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a, b := h.raw(), h.raw()
	a.initSampling()
	b.initialize()
	a.send(`{"jsonrpc":"2.0","id":"l","method":"logging/setLevel","params":{"level":"info"}}`)
	a.response()
	b.send(`{"jsonrpc":"2.0","id":"l","method":"logging/setLevel","params":{"level":"info"}}`)
	b.response()

	a.send(callWithToken(`"w"`, "wait", `{"key":"a"}`, `"tok"`))
	ts.waitStarted("a")
	if pr := a.next(); pr["method"] != "notifications/progress" || pr["_re"] != `"w"` {
		t.Fatalf("a's progress labelled %q: %s", pr["_re"], pr["_text"])
	}
	if lg := a.next(); lg["method"] != "notifications/message" || lg["_re"] != `"w"` {
		t.Fatalf("a's log labelled %q: %s", lg["_re"], lg["_text"])
	}
	b.send(callWithToken("7", "wait", `{"key":"b"}`, `7`))
	ts.waitStarted("b")
	if pr := b.next(); pr["method"] != "notifications/progress" || pr["_re"] != "7" {
		t.Fatalf("b's progress labelled %q: %s", pr["_re"], pr["_text"])
	}
	// Two clients in flight: the log is not certainly either's request.
	for _, c := range []*rawClient{a, b} {
		if lg := c.next(); lg["method"] != "notifications/message" || lg["_re"] != "" {
			t.Fatalf("a log of two clients' calls labelled %q: %s", lg["_re"], lg["_text"])
		}
	}
	ts.releaseKey("a")
	ts.releaseKey("b")
	if m := a.response(); m["id"] != "w" {
		t.Fatalf("a's answer: %s", m["_text"])
	}
	b.response()

	a.send(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"sample","arguments":{"text":"hi"}}}`)
	req := a.next()
	if req["method"] != "sampling/createMessage" || req["_re"] != "12" {
		t.Fatalf("the sampling request of a's call labelled %q: %s", req["_re"], req["_text"])
	}
	a.send(`{"jsonrpc":"2.0","id":` + jsonNum(req["id"]) + `,"result":{"model":"m","role":"assistant","content":{"type":"text","text":"yes"}}}`)
	if m := a.response(); textOfRaw(t, m) != "sampled: yes" {
		t.Fatalf("sample: %s", m["_text"])
	}
}

// A server-to-client request its client never answers is ended after
// AnswerTimeout: the upstream gets CodeUnanswered, so the call that asked
// finishes, the client is told the request is cancelled, and with the
// call answered the client no longer counts as in flight: another client's
// sampling then goes through (decision 0035).
func TestUnansweredRequestEndsAndFreesSampling(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{AnswerTimeout: 300 * time.Millisecond})
	a, b := h.raw(), h.raw()
	a.initSampling()
	b.initSampling()

	a.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sample","arguments":{"text":"hi"}}}`)
	req := a.next()
	if req["method"] != "sampling/createMessage" {
		t.Fatalf("a was sent %s", req["_text"])
	}
	// a never answers.
	c := a.next()
	if c["method"] != "notifications/cancelled" || c["_re"] != "1" ||
		jsonNum(c["params"].(map[string]any)["requestId"]) != jsonNum(req["id"]) {
		t.Fatalf("a was not told its sampling request ended: %s", c["_text"])
	}
	m := a.response()
	if res, _ := m["result"].(map[string]any); res == nil || res["isError"] != true ||
		!strings.Contains(textOfRaw(t, m), "did not answer sampling/createMessage within 300ms") {
		t.Fatalf("a's call after its sampling went unanswered: %s", m["_text"])
	}
	// A late answer goes nowhere.
	a.send(`{"jsonrpc":"2.0","id":` + jsonNum(req["id"]) + `,"result":{"model":"m","role":"assistant","content":{"type":"text","text":"late"}}}`)

	b.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sample","arguments":{"text":"hi"}}}`)
	req = b.next()
	if req["method"] != "sampling/createMessage" {
		t.Fatalf("b's sampling: %s", req["_text"])
	}
	b.send(`{"jsonrpc":"2.0","id":` + jsonNum(req["id"]) + `,"result":{"model":"m","role":"assistant","content":{"type":"text","text":"b's"}}}`)
	if m := b.response(); textOfRaw(t, m) != "sampled: b's" {
		t.Fatalf("b's sample after a's went unanswered: %s", m["_text"])
	}
	a.quiet(100 * time.Millisecond)
}

func jsonNum(v any) string {
	switch n := v.(type) {
	case float64:
		return strconv.FormatFloat(n, 'f', -1, 64)
	case string:
		return `"` + n + `"`
	}
	return "null"
}
