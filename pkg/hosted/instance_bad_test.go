//go:build linux

package hosted

import (
	"encoding/json"
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

// An instance whose arguments hold a secret shows it nowhere: not in its
// status (hearthd status and daemon_status show these), its log's name or
// its log's lines, nor in the errors its clients get.
func TestSecretArgumentsAreNotShown(t *testing.T) {
	tb := newTable(t)
	spec := testSpec("normal", Global)
	spec.Name, spec.Args = "", []string{"--token=s3cret", "--api-key", "s3cret"}
	c := attach(t, tb, spec, "/g")
	c.initialize()
	if out := text(t, c.call(1, "tools/call", `{"name":"echo","arguments":{"text":"ok"}}`)); !strings.HasPrefix(out, "ok") {
		t.Fatalf("call: %q", out)
	}
	st := tb.Statuses()
	b, _ := json.Marshal(st)
	if strings.Contains(string(b), "s3cret") || !strings.Contains(string(b), `--token=*** --api-key ***`) {
		t.Fatalf("status: %s", b)
	}
	log, _ := os.ReadFile(st[0].Log) // its start was logged before it answered
	if !strings.Contains(string(log), "starting") || strings.Contains(st[0].Log, "s3cret") || strings.Contains(st[0].Log, "token") || strings.Contains(string(log), "s3cret") {
		t.Fatalf("log %s: %s", st[0].Log, log)
	}
}
