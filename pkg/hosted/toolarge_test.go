//go:build linux

package hosted

import (
	"os"
	"strings"
	"testing"
)

// A reply over the line limit is dropped, and its request is answered with
// an error naming the limit (not left to wait for ever); the instance
// keeps serving, and its log says what was dropped.
func TestTooLargeReplyIsAnsweredWithTheLimit(t *testing.T) {
	old := maxUpstreamLine
	maxUpstreamLine = 256 << 10
	t.Cleanup(func() { maxUpstreamLine = old })
	tb := newTable(t)
	c := attach(t, tb, testSpec("normal", Global), "/g")
	c.initialize()
	m := c.call(1, "tools/call", `{"name":"big","arguments":{"size":1048576}}`)
	e, _ := m["error"].(map[string]any)
	if m["id"] != float64(1) || e == nil || e["code"] != float64(-32603) ||
		!strings.Contains(e["message"].(string), "test-normal's reply to tools/call was larger than hearth's 256 KiB limit") {
		t.Fatalf("got %.300s", m["_text"])
	}
	if out := text(t, c.call(2, "tools/call", `{"name":"big","arguments":{"size":1000}}`)); len(out) != 1000 {
		t.Fatalf("a reply under the limit: %d bytes", len(out))
	}
	log, _ := os.ReadFile(tb.Statuses()[0].Log)
	if !strings.Contains(string(log), "a line of stdout over 256 KiB was dropped: the reply to tools/call, answered to its client with an error") {
		t.Fatalf("log: %s", log)
	}
}
