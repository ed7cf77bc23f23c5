package route

import "testing"

// Clients keep the order they attached in; the one whose roots the
// upstream holds, and a wait to settle, go with a client that detaches.
func TestClientSetOrderAndRemoval(t *testing.T) {
	s := newClientSet()
	a, b, c := &Client{session: clientSession{level: -1}}, &Client{session: clientSession{level: -1}}, &Client{session: clientSession{level: -1}}
	s.add(a)
	s.add(b)
	s.add(c)
	if s.oldest() != a || s.len() != 3 {
		t.Fatal("a attached first")
	}
	s.rootsFrom = a
	a.settled = func() {}
	s.settling = 1
	s.remove(a)
	if s.oldest() != b || s.rootsFrom != nil || s.settling != 0 || a.settled != nil {
		t.Fatalf("after a left: oldest %p rootsFrom %p settling %d", s.oldest(), s.rootsFrom, s.settling)
	}
	if one, n := s.withRequests(); one != nil || n != 0 {
		t.Fatal("no client has requests")
	}
	c.inflight = map[string]string{"1": "1"}
	if one, n := s.withRequests(); one != c || n != 1 {
		t.Fatalf("withRequests: %p %d", one, n)
	}
}

// The level the upstream runs at is the most verbose any client asked for.
func TestClientSetMinLevel(t *testing.T) {
	s := newClientSet()
	if s.minLevel() != -1 {
		t.Fatal("nobody asked for a level")
	}
	for _, lvl := range []string{"", "error", "info", ""} {
		c := &Client{session: clientSession{level: levelOf(lvl)}}
		s.add(c)
	}
	if got := s.minLevel(); got != levelOf("info") {
		t.Fatalf("min level %d, want info's", got)
	}
	if moreVerbose(-1, -1) != -1 || moreVerbose(3, -1) != 3 || moreVerbose(-1, 2) != 2 || moreVerbose(4, 1) != 1 {
		t.Fatal("moreVerbose")
	}
}
