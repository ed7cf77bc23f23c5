//go:build linux

package hosted

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
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

// A drain waits for the upstream's answer to a call in flight (bounded by
// DrainWait): the client gets the call's result before its session may end,
// instead of the call being cancelled upstream with its answer dropped
// (then owed -32004 by the shim though the upstream may have run it). A
// call that outlasts DrainWait is given up then, and its session ends.
func TestDrainWaitsForTheUpstreamsAnswer(t *testing.T) {
	exe, _ := os.Executable()
	tb := NewTable(Options{Supervisor: supervisor.New(supervisor.Options{Grace: 300 * time.Millisecond, KeeperPath: exe}), LogDir: t.TempDir(), DrainWait: time.Minute})
	t.Cleanup(tb.Close)
	spec := testSpec("normal", Global)
	a := attach(t, tb, spec, "/a")
	a.initialize()
	a.s.Handle(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"ms":300}}}`)))
	a.s.Drain()
	a.s.EndInput(errors.New("drained")) // as the session's reader stops
	select {
	case <-a.s.Done():
		t.Fatal("the drained session ended with its call in flight")
	default:
	}
	if m := a.reply(15 * time.Second); text(t, m) != "slept" {
		t.Fatalf("the call in flight at the drain got %s", m["_text"])
	}
	waitFor(t, "the session's end once answered", 10*time.Second, func() bool {
		select {
		case <-a.s.Done():
			return true
		default:
			return false
		}
	})
	a.s.Detach()

	// A call longer than the drain's bound: the session ends at the bound.
	short := NewTable(Options{Supervisor: supervisor.New(supervisor.Options{Grace: 300 * time.Millisecond, KeeperPath: exe}), LogDir: t.TempDir(), DrainWait: 100 * time.Millisecond})
	t.Cleanup(short.Close)
	b := attach(t, short, spec, "/b")
	b.initialize()
	b.s.Handle(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"hang","arguments":{}}}`)))
	b.s.Drain()
	waitFor(t, "the session's end at DrainWait", 10*time.Second, func() bool {
		select {
		case <-b.s.Done():
			return true
		default:
			return false
		}
	})
	b.s.Detach()
}
