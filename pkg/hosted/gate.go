package hosted

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Gates (docs/decisions/0074-exclusive-and-capped-servers.md): an exclusive
// server serves one client at a time, and a capped one runs at most
// MaxInstances instances at once. A client that would be one too many
// waits its turn, in the order it came, up to the spec's queue bound;
// beyond it, it is refused with an error naming who holds the server.
// A gate is passed when the client's first frame binds its session, before
// any instance is chosen; it is let go of when the session ends.

// gates are the table's, by server (gateKey).
type gates struct {
	mu sync.Mutex
	by map[string]*gate
}

// gate is one server's: who holds it (a session each for an exclusive
// server, a scope each for a capped one), since when, and who waits.
type gate struct {
	label   string
	limit   int
	holders map[string]*holder // by unit: a session's id or a scope
	waiting []*gateWaiter
}

type holder struct {
	who      string // the client, as status words it
	since    time.Time
	sessions int
}

type gateWaiter struct {
	unit, who string
	admitted  chan struct{}
}

// gated: the spec's clients pass a gate.
func (s Spec) gated() bool { return s.Sharing == Exclusive || s.MaxInstances > 0 }

// gateKey names the server a gate is of: its key without a scope or
// shape (every instance of it).
func (s Spec) gateKey() string { return s.Key("\x00gate", "") }

// gateUnit is what holds a place at the gate: the session itself for an
// exclusive server, the instance's scope for a capped one (two clients in
// one directory share an instance, and a place).
func (s *Session) gateUnit() string {
	if s.spec.Sharing == Exclusive {
		return fmt.Sprintf("session %p", s)
	}
	return "scope " + s.spec.Scope(s.clientDir, s.conn)
}

// admit passes the session through its server's gate: at once when there
// is room (or its unit holds a place already), else after the clients
// ahead of it let go; an error when the queue is full, or when the session
// ends while it waits. The session's lock is not held: a client that
// waits is only one of its reads held up.
func (t *Table) admit(s *Session, who string) (*gate, error) {
	unit := s.gateUnit()
	t.gates.mu.Lock()
	if t.gates.by == nil {
		t.gates.by = map[string]*gate{}
	}
	key := s.spec.gateKey()
	g := t.gates.by[key]
	if g == nil {
		limit := 1
		if s.spec.Sharing != Exclusive && s.spec.MaxInstances > 0 {
			limit = s.spec.MaxInstances
		}
		g = &gate{label: s.spec.Label(), limit: limit, holders: map[string]*holder{}}
		t.gates.by[key] = g
	}
	if h := g.holders[unit]; h != nil {
		h.sessions++
		t.gates.mu.Unlock()
		return g, nil
	}
	if len(g.holders) < g.limit && len(g.waiting) == 0 {
		g.holders[unit] = &holder{who: who, since: time.Now(), sessions: 1}
		t.gates.mu.Unlock()
		return g, nil
	}
	if len(g.waiting) >= s.spec.queue() {
		err := g.refusal(s.spec)
		t.gates.mu.Unlock()
		return nil, err
	}
	w := &gateWaiter{unit: unit, who: who, admitted: make(chan struct{})}
	g.waiting = append(g.waiting, w)
	t.gates.mu.Unlock()
	select {
	case <-w.admitted:
		return g, nil
	case <-s.done:
		t.gates.mu.Lock()
		defer t.gates.mu.Unlock()
		select {
		case <-w.admitted: // admitted as it ended: its place goes on
			g.release(unit)
		default:
			g.drop(w)
		}
		return nil, fmt.Errorf("the client left while it waited for %s", g.label)
	}
}

// refusal is the error of a client the queue has no room for, naming who
// holds the server; t.gates.mu is held.
func (g *gate) refusal(spec Spec) error {
	var held []string
	for _, h := range g.holders {
		held = append(held, fmt.Sprintf("%s since %s", h.who, h.since.Format(time.TimeOnly)))
	}
	what := "is exclusive: it serves one client at a time"
	if spec.Sharing != Exclusive {
		what = "runs at most " + strconv.Itoa(g.limit) + " instances at once (max_instances)"
	}
	q := spec.queue()
	return fmt.Errorf("%s %s, and is held by %s; %d clients wait already (queue = %d): try again once it is free, or raise queue",
		g.label, what, strings.Join(held, ", "), len(g.waiting), q)
}

// leave lets go of the session's place at its gate, admitting whoever
// waits next.
// s.mu is held.
func (t *Table) leave(s *Session) {
	g := s.gate
	if g == nil {
		return
	}
	s.gate = nil
	t.gates.mu.Lock()
	defer t.gates.mu.Unlock()
	g.release(s.gateUnit())
}

// release takes a session off its unit's place; the last one frees the
// place for the next waiter (and any waiter of a unit that holds one);
// t.gates.mu is held.
func (g *gate) release(unit string) {
	h := g.holders[unit]
	if h == nil {
		return
	}
	if h.sessions--; h.sessions > 0 {
		return
	}
	delete(g.holders, unit)
	for len(g.waiting) > 0 {
		w := g.waiting[0]
		if h := g.holders[w.unit]; h != nil {
			h.sessions++
		} else if len(g.holders) < g.limit {
			g.holders[w.unit] = &holder{who: w.who, since: time.Now(), sessions: 1}
		} else {
			return
		}
		g.waiting = g.waiting[1:]
		close(w.admitted)
	}
}

// drop takes a waiter out of the queue; t.gates.mu is held.
func (g *gate) drop(w *gateWaiter) {
	for i, x := range g.waiting {
		if x == w {
			g.waiting = append(g.waiting[:i], g.waiting[i+1:]...)
			return
		}
	}
}

// GateStatus says who holds a gated server and how many wait.
type GateStatus struct {
	Limit   int      `json:"limit"`   // 1 for an exclusive server, else max_instances
	Holders []string `json:"holders"` // who holds it, and since when
	Waiting int      `json:"waiting"`
	Queue   int      `json:"queue"`
}

// gateStatus is the spec's gate's (nil: it has none).
func (t *Table) gateStatus(spec Spec) *GateStatus {
	if !spec.gated() {
		return nil
	}
	t.gates.mu.Lock()
	defer t.gates.mu.Unlock()
	st := &GateStatus{Limit: 1, Queue: spec.queue()}
	if spec.Sharing != Exclusive {
		st.Limit = spec.MaxInstances
	}
	if g := t.gates.by[spec.gateKey()]; g != nil {
		for _, h := range g.holders {
			st.Holders = append(st.Holders, h.who+" since "+h.since.Format(time.TimeOnly))
		}
		st.Waiting = len(g.waiting)
	}
	return st
}
