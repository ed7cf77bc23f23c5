//go:build linux

package hosted

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// initAsync sends the client's initialize from another goroutine (it may
// wait at a gate) and returns where its reply comes.
func (c *client) initAsync(name string) {
	go c.s.Handle(jsonrpc.Parse(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":%q,"version":"1"}}}`, name)))
}

func gateOf(t *testing.T, tb *Table, spec Spec) GateStatus {
	t.Helper()
	st := tb.gateStatus(spec)
	if st == nil {
		t.Fatal("no gate")
	}
	return *st
}

// An exclusive server serves one client at a time: three clients come,
// the first is served, the others wait in the order they came, each is
// served once the one before it leaves, all by the one upstream process;
// none is lost.
func TestExclusiveServesOneClientAtATime(t *testing.T) {
	tb := newTable(t)
	spec := testSpec("normal", Exclusive)
	a, b, c := open(t, tb, spec, "/p"), open(t, tb, spec, "/q"), open(t, tb, spec, "/r")
	a.initAsync("a")
	if m := a.reply(15 * time.Second); m["result"] == nil {
		t.Fatalf("a: %s", m["_text"])
	}
	b.initAsync("b")
	waitFor(t, "b waiting", 10*time.Second, func() bool { return gateOf(t, tb, spec).Waiting == 1 })
	c.initAsync("c")
	waitFor(t, "c waiting", 10*time.Second, func() bool { return gateOf(t, tb, spec).Waiting == 2 })
	if g := gateOf(t, tb, spec); g.Limit != 1 || len(g.Holders) != 1 || !strings.HasPrefix(g.Holders[0], "a since") {
		t.Fatalf("gate %+v", g)
	}
	pids := map[string]bool{}
	echo := func(cl *client, name string) {
		t.Helper()
		out := text(t, cl.call(1, "tools/call", `{"name":"echo","arguments":{"text":"`+name+`"}}`))
		f := strings.Fields(out)
		if len(f) != 3 || f[0] != name {
			t.Fatalf("%s: echo %q", name, out)
		}
		pids[f[2]] = true
	}
	echo(a, "a")
	select {
	case m := <-b.frames:
		t.Fatalf("b was answered while a held the server: %s", m["_text"])
	default:
	}
	a.s.Detach()
	if m := b.reply(15 * time.Second); m["result"] == nil {
		t.Fatalf("b: %s", m["_text"])
	}
	echo(b, "b")
	if g := gateOf(t, tb, spec); g.Waiting != 1 || len(g.Holders) != 1 || !strings.HasPrefix(g.Holders[0], "b since") {
		t.Fatalf("gate after a left: %+v", g)
	}
	b.s.Detach()
	if m := c.reply(15 * time.Second); m["result"] == nil {
		t.Fatalf("c: %s", m["_text"])
	}
	echo(c, "c")
	if len(pids) != 1 {
		t.Fatalf("upstream processes %v, want one", pids)
	}
	if st := tb.Statuses(); len(st) != 1 || st[0].Gate == nil || st[0].Gate.Waiting != 0 {
		t.Fatalf("status %+v", st)
	}
}

// With no queue (queue = 0), a second client is refused at once with an
// error naming the holder; a queue that is full refuses the same way; a
// client that leaves while it waits frees its place in the queue.
func TestExclusiveRefusesBeyondItsQueue(t *testing.T) {
	tb := newTable(t)
	spec := testSpec("normal", Exclusive)
	spec.Queue = -1
	a, b := open(t, tb, spec, "/p"), open(t, tb, spec, "/q")
	a.initAsync("holder")
	a.reply(15 * time.Second)
	b.initAsync("b")
	m := b.reply(15 * time.Second)
	e, _ := m["error"].(map[string]any)
	if e == nil || !strings.Contains(e["message"].(string), "is exclusive") || !strings.Contains(e["message"].(string), "held by holder since") {
		t.Fatalf("refusal: %s", m["_text"])
	}

	spec.Queue = 1
	spec.Name = "test-queued"
	h, w1, w2 := open(t, tb, spec, "/p"), open(t, tb, spec, "/q"), open(t, tb, spec, "/r")
	h.initAsync("h")
	h.reply(15 * time.Second)
	w1.initAsync("w1")
	waitFor(t, "w1 waiting", 10*time.Second, func() bool { return gateOf(t, tb, spec).Waiting == 1 })
	w2.initAsync("w2")
	if m := w2.reply(15 * time.Second); m["error"] == nil || !strings.Contains(m["_text"].(string), "1 clients wait already (queue = 1)") {
		t.Fatalf("full queue: %s", m["_text"])
	}
	w1.s.Detach() // it leaves while it waits
	if m := w1.reply(15 * time.Second); m["error"] == nil || !strings.Contains(m["_text"].(string), "left while it waited") {
		t.Fatalf("the leaver: %s", m["_text"])
	}
	if g := gateOf(t, tb, spec); g.Waiting != 0 || len(g.Holders) != 1 {
		t.Fatalf("gate after the waiter left: %+v", g)
	}
}

// A server capped at two instances (max_instances = 2, directory
// sharing): clients in two directories get an instance each, a client in
// a third waits until one of them leaves (whose instance stops with it),
// and a second client in a directory that holds an instance joins it at
// once; never more than two instances.
func TestCappedServerRunsAtMostTwoInstances(t *testing.T) {
	tb := newTable(t)
	spec := testSpec("normal", Directory)
	spec.MaxInstances = 2
	root := t.TempDir()
	dir := func(n string) string {
		d := filepath.Join(root, n)
		os.Mkdir(d, 0o700)
		return d
	}
	a, b, c, a2 := open(t, tb, spec, dir("a")), open(t, tb, spec, dir("b")), open(t, tb, spec, dir("c")), open(t, tb, spec, dir("a"))
	for _, cl := range []*client{a, b} {
		cl.initAsync("x")
		if m := cl.reply(15 * time.Second); m["result"] == nil {
			t.Fatalf("init: %s", m["_text"])
		}
	}
	c.initAsync("c")
	waitFor(t, "c waiting", 10*time.Second, func() bool { return gateOf(t, tb, spec).Waiting == 1 })
	a2.initAsync("a2")
	if m := a2.reply(15 * time.Second); m["result"] == nil {
		t.Fatalf("a second client in /a: %s", m["_text"])
	}
	if n := len(tb.Statuses()); n != 2 {
		t.Fatalf("%d instances, want 2", n)
	}
	a.s.Detach()
	select {
	case m := <-c.frames:
		t.Fatalf("c was admitted while /a still had a client: %s", m["_text"])
	case <-time.After(200 * time.Millisecond):
	}
	a2.s.Detach()
	if m := c.reply(15 * time.Second); m["result"] == nil {
		t.Fatalf("c: %s", m["_text"])
	}
	waitFor(t, "two instances", 10*time.Second, func() bool { return len(tb.Statuses()) == 2 })
	for _, st := range tb.Statuses() {
		if st.Scope == dir("a") {
			t.Fatalf("/a's instance still runs: %+v", st)
		}
		if g := st.Gate; g == nil || g.Limit != 2 || len(g.Holders) != 2 || g.Waiting != 0 {
			t.Fatalf("gate %+v", st.Gate)
		}
	}
}
