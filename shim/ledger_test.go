package shim

import (
	"encoding/json"
	"testing"
)

func TestNoteTracksRequestsInFlight(t *testing.T) {
	l := newLedger()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7"}}`, // "7" is not 7: still owed
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`,   // no reply will come
		`not json`,
	} {
		l.note([]byte(line))
	}
	if _, ok := l.owed[`"a"`]; !ok || len(l.owed) != 2 || !l.opening.initialized || l.opening.frame == nil {
		t.Fatalf("inflight %v initialized %v init %s", l.owed, l.opening.initialized, l.opening.frame)
	}
	if l.settle([]byte(`{"jsonrpc":"2.0","id":"a","result":{}}`), 1) {
		t.Fatal("an ordinary reply was swallowed")
	}
	if l.settle([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`), 1) {
		t.Fatal("a notification was swallowed")
	}
	if _, ok := l.owed["a"]; ok {
		t.Fatal("a answered but still in flight")
	}
	owed := l.take(0)
	if len(owed) != 1 || string(owed[0].id) != "1" || len(l.owed) != 0 {
		t.Fatalf("owed %v", owed)
	}
	l.restore(owed)
	if len(l.owed) != 1 {
		t.Fatal("restore")
	}
}

// Frames the daemon answers without a pending request's id (malformed,
// invalid id, over-long) are owed a reply too: the shim must not exit at EOF
// before it arrives.
func TestBadFramesAreOwedAReply(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":`, // parse error
		`not json`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}", // invalid UTF-8
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,                        // batch
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,                        // fractional id
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,                       // null id
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,                         // object id
		`{"jsonrpc":"2.0","id":7}`,                                          // neither method nor result
		`{"jsonrpc":"2.0","method":"$/hearth/tooLarge"}`,                    // the shim's marker for an over-long line
	} {
		l := newLedger()
		l.note([]byte(line))
		if l.anon != 1 {
			t.Errorf("%q: %d replies owed, want 1", line, l.anon)
			continue
		}
		for _, reply := range []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"x"}}`} {
			l.anon = 1
			if l.settle([]byte(reply), 1) || l.anon != 0 {
				t.Errorf("%q: reply %s not counted (%d owed)", line, reply, l.anon)
			}
		}
	}
	// A notification, a response from the client and a valid request owe
	// nothing anonymous.
	l := newLedger()
	for _, line := range []string{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":"hearth-roots-1","result":{"roots":[]}}`, `{"jsonrpc":"2.0","id":3,"method":"ping"}`} {
		l.note([]byte(line))
	}
	if l.anon != 0 || len(l.owed) != 1 {
		t.Fatalf("anon %d inflight %v", l.anon, l.owed)
	}
}

// 77 and "77" in flight together are two requests the relay owes: a reply
// to one settles that one only, and a lost daemon leaves the other owed
// under its own id.
func TestInflightKeepsIDTypes(t *testing.T) {
	l := newLedger()
	l.note([]byte(`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"x"}}`))
	l.note([]byte(`{"jsonrpc":"2.0","id":"77","method":"tools/call","params":{"name":"x"}}`))
	if len(l.owed) != 2 {
		t.Fatalf("inflight %v", l.owed)
	}
	l.settle([]byte(`{"jsonrpc":"2.0","id":"77","result":{}}`), 1)
	r, ok := l.owed["77"]
	if len(l.owed) != 1 || !ok || string(r.id) != "77" {
		t.Fatalf("after the reply to \"77\": %v", l.owed)
	}
}

// A reconnect's probe is the shim's own: its reply is swallowed and
// acknowledged, whatever the client's requests; what a connection given
// up still delivers is swallowed too.
func TestLedgerProbeAndGivenConnections(t *testing.T) {
	l := newLedger()
	l.note([]byte(`{"jsonrpc":"2.0","id":"hearth-shim-replay-1","method":"ping"}`)) // a client may use any id
	name := l.replayName()
	id, _ := json.Marshal(name)
	ack := l.expect(id)
	if name != "hearth-shim-replay-1" {
		t.Fatalf("first replay %q", name)
	}
	if !l.settle([]byte(`{"jsonrpc":"2.0","id":"hearth-shim-replay-1","result":{}}`), 2) {
		t.Fatal("the probe's reply reached the client")
	}
	<-ack
	if l.settle([]byte(`{"jsonrpc":"2.0","id":"hearth-shim-replay-1","result":{}}`), 2) || l.owes() != 0 {
		t.Fatalf("the client's own request under that id: swallowed, or still owed (%d)", l.owes())
	}
	if l.replayName() != "hearth-shim-replay-2" {
		t.Fatal("each replay's id is its own")
	}
	l.note([]byte(`{"jsonrpc":"2.0","id":5,"method":"ping"}`))
	owed := l.take(3)
	if !l.settle([]byte(`{"jsonrpc":"2.0","id":5,"result":{}}`), 3) || l.settle([]byte(`{"jsonrpc":"2.0","id":6,"result":{}}`), 4) {
		t.Fatal("a reply read from a connection given up reaches the client, or a later one's does not")
	}
	l.restore(owed)
	l.restore(owed) // taken twice, restored twice: owed twice
	if r := l.owed["5"]; r.n != 2 {
		t.Fatalf("restored %+v", r)
	}
}

// An id sent twice while in flight is owed two replies; an open listen is
// sent to the next daemon again only while it is the one request of its
// id, and an answer ends it.
func TestLedgerDuplicatesAndListens(t *testing.T) {
	l := newLedger()
	l.note([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	l.note([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	l.settle([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), 1)
	if l.owes() != 1 {
		t.Fatalf("owed %d after one of two replies", l.owes())
	}
	const listen = `{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{}}`
	l.note([]byte(listen))
	frames, rest := l.listensOf(l.take(1))
	if len(frames) != 1 || string(frames[0]) != listen || len(rest) != 1 || string(rest[0].id) != "1" {
		t.Fatalf("listens %q, lost %v", frames, rest)
	}
	l.note([]byte(listen))
	l.note([]byte(listen)) // a second request under its id: none is a listen to send again
	if frames, _ := l.listensOf(l.take(2)); len(frames) != 0 {
		t.Fatalf("sent again %q", frames)
	}
	l.note([]byte(listen))
	l.settle([]byte(`{"jsonrpc":"2.0","id":"sub","result":{}}`), 3)
	if len(l.listens) != 0 || l.owes() != 0 {
		t.Fatal("an answered listen is over")
	}
}
