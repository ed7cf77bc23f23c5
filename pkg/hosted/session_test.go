//go:build linux

package hosted

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

func initParams(caps, name string) string {
	return fmt.Sprintf(`{"protocolVersion":"2025-11-25","capabilities":%s,"clientInfo":{"name":%q,"version":"1"}}`, caps, name)
}

// A session is bound to the instance of its client's shape at its
// initialize: clients of one shape share an instance, those of two shapes
// have one each, and status says what each serves and what tells the two
// apart. Before initialize, ping is answered and nothing else reaches a
// server.
func TestSessionsAreBoundByShape(t *testing.T) {
	tb := newTable(t)
	spec := testSpec("normal", Directory)
	spec.Entry = "mine"
	a, b, c := open(t, tb, spec, "/p"), open(t, tb, spec, "/p"), open(t, tb, spec, "/p")
	if st := tb.Statuses(); len(st) != 0 {
		t.Fatalf("instances before any initialize: %+v", st)
	}
	a.s.Handle(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)))
	if m := a.reply(5 * time.Second); m["result"] == nil {
		t.Fatalf("ping before initialize: %s", m["_text"])
	}
	a.s.Handle(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":"l","method":"tools/list"}`)))
	if m := a.reply(5 * time.Second); !strings.Contains(m["_text"].(string), "send initialize first") {
		t.Fatalf("tools/list before initialize: %s", m["_text"])
	}
	a.s.Handle(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}`))) // nowhere to go: dropped
	a.call(0, "initialize", initParams(`{"roots":{}}`, "one"))
	b.call(0, "initialize", initParams(`{"roots":{"listChanged":false}}`, "two")) // the same shape: another client declaring the same
	c.call(0, "initialize", initParams(`{}`, "other"))
	if a.s.Instance() != b.s.Instance() || a.s.Instance() == c.s.Instance() || a.s.Instance() == "" {
		t.Fatalf("instances: a %s, b %s, c %s", a.s.Instance(), b.s.Instance(), c.s.Instance())
	}
	st := tb.Statuses()
	if len(st) != 2 {
		t.Fatalf("%d instances, want 2: %+v", len(st), st)
	}
	for _, s := range st {
		if s.Name != "test-normal" || len(s.Entries) != 1 || s.Entries[0] != "mine" || s.Clients == 0 || s.Differs == "" || strings.Contains(s.Differs, "HOSTED_TEST_SERVER=") {
			t.Errorf("status %+v", s)
		}
		want := "2025-11-25, roots"
		if s.Key == c.s.Instance() {
			want = "2025-11-25, no capabilities"
		}
		if s.Shape != want || !strings.Contains(s.Differs, "for "+want) || strings.Contains(s.Differs, "in /p") {
			t.Errorf("instance %s: shape %q, differs %q; want %q", s.Key, s.Shape, s.Differs, want)
		}
	}
	// The entry's name finds both: one server for two shapes.
	if n, err := tb.Restart("mine"); n != 2 || err != nil {
		t.Fatalf("restart by the entry's name: %d %v", n, err)
	}
}

// A client that probes with 2026-07-28 _meta is bound by it; an
// initialize of the same declarations keeps it where it is, one of other
// declarations moves it.
func TestSessionIsBoundAgainByAnotherInitialize(t *testing.T) {
	tb := newTable(t)
	spec := testSpec("normal", Global)
	a := open(t, tb, spec, "/p")
	a.s.Handle(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/clientInfo":{"name":"m","version":"1"}}}}`)))
	if m := a.reply(15 * time.Second); m["result"] == nil || !strings.Contains(m["_text"].(string), `"supportedVersions":["2026-07-28"]`) {
		t.Fatalf("the probe of a 2025 server, answered from its initialize: %s", m["_text"])
	}
	probed := a.s.Instance()
	a.call(0, "initialize", initParams(`{"roots":{}}`, "m"))
	if a.s.Instance() != probed {
		t.Fatalf("an initialize of the probe's declarations moved the session: %s -> %s", probed, a.s.Instance())
	}
	a.call(1, "initialize", initParams(`{"sampling":{}}`, "m"))
	if a.s.Instance() == probed {
		t.Fatal("an initialize of other declarations left the session where it was")
	}
	if out := text(t, a.call(2, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`)); !strings.HasPrefix(out, "x from") {
		t.Fatalf("echo after the move: %q", out)
	}
	for _, s := range tb.Statuses() {
		if s.Key == probed && s.Clients != 0 {
			t.Fatalf("the instance left still counts the client: %+v", s)
		}
	}
}
