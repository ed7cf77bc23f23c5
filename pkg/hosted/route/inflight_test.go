package route

import (
	"encoding/json"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/envelope"
)

// The ids hearth gives the upstream increase and are never given twice,
// not even once every request was forgotten (a new upstream process): a
// late answer of the old one never finds a new request.
func TestInflightIDsAreNeverReused(t *testing.T) {
	f := newInflight()
	seen := map[string]bool{}
	for round := 0; round < 3; round++ {
		for i := 0; i < 5; i++ {
			id, key := f.add(&pend{method: "tools/call"})
			if key != envelope.Key(id) || seen[key] {
				t.Fatalf("id %s key %q: given twice or mis-keyed", id, key)
			}
			seen[key] = true
			if f.get(key) == nil {
				t.Fatalf("request under %s not found", id)
			}
		}
		f.clear()
		if len(f.byKey) != 0 {
			t.Fatal("clear kept requests")
		}
	}
	if f.lastID != 15 {
		t.Fatalf("last id %d, want 15", f.lastID)
	}
}

// A request's progress token is hearth's own, found until the request is
// answered; a retry under a new id keeps it.
func TestInflightProgressTokens(t *testing.T) {
	f := newInflight()
	a, b := &pend{method: "tools/call"}, &pend{method: "tools/call"}
	_, ka := f.add(a)
	_, kb := f.add(b)
	ta := f.giveToken(a, json.RawMessage(`"client-a"`))
	tb := f.giveToken(b, json.RawMessage(`7`))
	if ta == tb || f.byTok(ta) != a || f.byTok(tb) != b || string(a.progress.client) != `"client-a"` {
		t.Fatalf("tokens %q %q", ta, tb)
	}
	_, moved := f.move(ka, a)
	if f.get(ka) != nil || f.get(moved) != a || f.byTok(ta) != a {
		t.Fatal("a retry lost the request or its token")
	}
	f.remove(kb)
	if f.get(kb) != nil || f.byTok(tb) != nil {
		t.Fatal("an answered request's token still routes progress")
	}
	f.dropToken(a)
	if f.byTok(ta) != nil {
		t.Fatal("a dropped token still routes progress")
	}
}

// busy counts every request in flight but hearth's own listens; anyClient
// says whether one is an attached client's.
func TestInflightBusyAndClients(t *testing.T) {
	f := newInflight()
	f.own("subscriptions/listen", nil)
	if f.busy() != 0 || f.anyClient() {
		t.Fatal("hearth's own listen makes the router busy")
	}
	f.own("resources/subscribe", nil)
	if f.busy() != 1 || f.anyClient() {
		t.Fatalf("busy %d with hearth's own subscribe", f.busy())
	}
	c := &Client{}
	f.add(&pend{c: c, method: "tools/call"})
	if f.busy() != 2 || !f.anyClient() {
		t.Fatal("a client's request is not counted")
	}
	c.gone = true
	if f.anyClient() {
		t.Fatal("a gone client's request counts as a client's")
	}
}
