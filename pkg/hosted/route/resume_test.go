package route

import (
	"reflect"
	"testing"
)

// A parked client's subscriptions are held on the upstream and its level
// counts towards the upstream's, until it comes back: then they are its
// own again, with no subscription held for it.
func TestParkingHoldsUntilResumed(t *testing.T) {
	r := New(Options{})
	c := r.Attach(WriteFunc(func([]byte) error { return nil }), nil)
	c.Resume("shim-1")
	r.mu.Lock()
	r.subs.add(c, "file:///b")
	r.subs.add(c, "file:///a")
	c.session.level = levelOf("debug")
	r.mu.Unlock()
	c.Park()
	r.mu.Lock()
	p := r.parked.clients["shim-1"]
	if !reflect.DeepEqual(p.subs, []string{"file:///a", "file:///b"}) || r.subs.held["file:///a"] != 1 || r.parked.minLevel() != levelOf("debug") {
		t.Fatalf("parked %+v, held %v", p, r.subs.held)
	}
	if cc := r.carriedClients()["shim-1"]; cc.Level != "debug" || len(cc.Subscribed) != 2 {
		t.Fatalf("carried %+v", cc)
	}
	r.mu.Unlock()
	back := r.Attach(WriteFunc(func([]byte) error { return nil }), nil)
	back.Resume("shim-1")
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.parked.clients) != 0 || len(r.subs.held) != 0 || !back.subs.uris["file:///a"] || back.session.level != levelOf("debug") {
		t.Fatalf("resumed: parked %v held %v subs %v level %d", r.parked.clients, r.subs.held, back.subs.uris, back.session.level)
	}
}
