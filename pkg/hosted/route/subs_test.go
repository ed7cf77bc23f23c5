package route

import (
	"slices"
	"testing"
)

func subsClient() *Client { return &Client{subs: clientSubs{uris: map[string]bool{}}} }

// A URI is the upstream's to keep subscribed while any attached client,
// or a parked one, holds it; the last one out says so.
func TestSubscriptionsCountClients(t *testing.T) {
	s := newSubscriptions()
	a, b := subsClient(), subsClient()
	s.add(a, "file:///x")
	s.add(b, "file:///x")
	if !s.upstreamHas("file:///x") || !a.subs.uris["file:///x"] {
		t.Fatal("not subscribed")
	}
	if s.remove(a, "file:///x") {
		t.Fatal("b still holds it")
	}
	if !s.remove(b, "file:///x") || s.upstreamHas("file:///x") || b.subs.uris["file:///x"] {
		t.Fatal("the last subscriber's unsubscribe")
	}
	if !s.remove(a, "file:///never") {
		t.Fatal("a URI nobody holds is nobody's")
	}
}

// What the previous daemon's upstream was subscribed to, or a parked
// client holds, keeps it subscribed; a URI held for nobody becomes the
// subscribing client's own.
func TestSubscriptionsHeld(t *testing.T) {
	s := newSubscriptions()
	s.held["file:///handed"] = 0
	s.held["file:///parked"] = 1
	a := subsClient()
	s.add(a, "file:///mine")
	if !s.upstreamHas("file:///handed") || !s.upstreamHas("file:///parked") {
		t.Fatal("held URIs are the upstream's")
	}
	if got := s.subscribed(); !slices.Equal(got, []string{"file:///handed", "file:///mine", "file:///parked"}) {
		t.Fatalf("subscribed %v", got)
	}
	s.unhold("file:///handed")
	s.unhold("file:///parked")
	if s.isHeld("file:///handed") || !s.isHeld("file:///parked") {
		t.Fatal("unhold lets go of a URI held for nobody only")
	}
}
