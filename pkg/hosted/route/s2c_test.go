package route

import (
	"encoding/json"
	"testing"
	"time"
)

// The table's ids increase; an upstream's request is found by its own id
// too, a round's only by hearth's; taking one forgets both and stops its
// timer.
func TestS2CTableAddAndTake(t *testing.T) {
	tb := newS2CTable()
	c := &Client{}
	fired := make(chan bool, 1)
	up := &s2cReq{c: c, upID: json.RawMessage(`"u1"`), method: "sampling/createMessage"}
	_, k1 := tb.add(up)
	up.timer = time.AfterFunc(20*time.Millisecond, func() { fired <- true })
	round := &s2cReq{c: c, round: &inputRound{}, method: "elicitation/create"}
	_, k2 := tb.add(round)
	if k1 == k2 || up.seq >= round.seq {
		t.Fatalf("ids %q %q, seqs %d %d", k1, k2, up.seq, round.seq)
	}
	if k, ok := tb.forUp(`"u1"`); !ok || k != k1 {
		t.Fatalf("by the upstream's id: %q %v", k, ok)
	}
	if len(tb.byUp) != 1 {
		t.Fatalf("a round's request is keyed by an upstream id: %v", tb.byUp)
	}
	if tb.take(k1) != up || tb.get(k1) != nil {
		t.Fatal("take kept the request")
	}
	if _, ok := tb.forUp(`"u1"`); ok {
		t.Fatal("take kept the upstream's id")
	}
	if tb.take(k1) != nil {
		t.Fatal("taken twice")
	}
	select {
	case <-fired:
		t.Fatal("the timer of a request taken fired")
	case <-time.After(60 * time.Millisecond):
	}
}

// The frames held for a client until it is initialized come out in the
// order the upstream sent them, and only that client's.
func TestS2CTableHeldInOrder(t *testing.T) {
	tb := newS2CTable()
	a, b := &Client{}, &Client{}
	var want []*s2cReq
	for i := 0; i < 6; i++ {
		s := &s2cReq{c: a, upID: json.RawMessage{byte('0' + i)}, held: []byte{byte('a' + i)}}
		if i%2 == 1 {
			s.c = b
		}
		tb.add(s)
		if s.c == a {
			want = append(want, s)
		}
	}
	tb.add(&s2cReq{c: a, upID: json.RawMessage(`9`)}) // sent already
	got := tb.heldFor(a)
	if len(got) != len(want) {
		t.Fatalf("held %d, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("held out of order at %d", i)
		}
	}
	if n := len(tb.of(b)); n != 3 {
		t.Fatalf("b has %d requests, want 3", n)
	}
	tb.clear()
	if len(tb.byID) != 0 || len(tb.byUp) != 0 {
		t.Fatal("clear kept requests")
	}
}
