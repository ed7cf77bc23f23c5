//go:build linux

package hosted

import (
	"encoding/json"
	"testing"
	"time"
)

// An instance handed from one table to another keeps its upstream: the
// same process, its in-memory state, one initialize in all; a new client
// of the adopting table is answered initialize from the carried result.
// Closing the adopting table ends the upstream.
func TestHandedInstanceKeepsItsUpstream(t *testing.T) {
	old := newTable(t)
	spec := testSpec("normal", Global)
	a := attach(t, old, spec, "/a")
	a.initialize()
	if got := text(t, a.call(1, "tools/call", `{"name":"count","arguments":{}}`)); got != "1 1" {
		t.Fatalf("count before: %q", got)
	}
	st := old.Statuses()[0]
	a.s.Drain()
	a.s.Detach()
	handed := old.HandOver()
	if len(handed) != 1 || len(old.Statuses()) != 0 {
		t.Fatalf("handed %d, left %+v", len(handed), old.Statuses())
	}
	// What travels as JSON does so.
	b, err := json.Marshal(handed[0].Record)
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	handed[0].Record = rec
	old.Close() // as the old daemon ends: the handed upstream is not its any more
	if !alive(st.Pid) {
		t.Fatal("the upstream ended with the table that handed it over")
	}
	heir := newTable(t)
	heir.Adopt(handed)
	c := attach(t, heir, spec, "/c")
	if m := c.initialize(); m["result"] == nil {
		t.Fatalf("initialize after the hand-over: %s", m["_text"])
	}
	if got := text(t, c.call(1, "tools/call", `{"name":"count","arguments":{}}`)); got != "2 1" {
		t.Fatalf("count after the hand-over: %q (want the second call, and still one initialize)", got)
	}
	now := heir.Statuses()[0]
	if now.Pid != st.Pid || now.State != "running" || now.Restarts != 0 {
		t.Fatalf("status after: %+v, before: %+v", now, st)
	}
	heir.Close()
	waitFor(t, "the adopted upstream's end", 10*time.Second, func() bool { return !alive(now.Pid) })
}
