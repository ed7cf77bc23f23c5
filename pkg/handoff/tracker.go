//go:build linux

package handoff

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"sync"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc/wire"
)

// Tracker records, in the region, what the shim needs should the daemon die
// (the daemon's side): each request from when it is taken in until its
// reply is written, the session's opening, and through its Journal how far
// input was taken in. It is the session's mcp.Tracker; the Writer tells it
// of replies.
type Tracker struct {
	r *Region
	j *Journal
	// ctl sends a control message to the shim, for what the region cannot
	// hold.
	ctl func(kind byte, parts ...[]byte) error

	mu      sync.Mutex
	closed  bool
	seq     uint64
	used    [NumSlots / 64]uint64 // slot bitmap
	byRaw   map[string][]reg      // requests in flight by id text, oldest first
	opened  bool
	opening bool
	// replying are the requests whose replies are in the batch being
	// written (Replying until Delivered).
	replying []reg
}

type reg struct {
	slot int // -1: tracked by the shim (MsgTrack)
	seq  uint64
}

// NewTracker tracks a session whose input is read through j.
func NewTracker(r *Region, j *Journal, ctl func(kind byte, parts ...[]byte) error) *Tracker {
	return &Tracker{r: r, j: j, ctl: ctl, byRaw: map[string][]reg{}}
}

// Took records what a frame taken in means for a restart, then marks it
// taken in: a daemon killed in between leaves records the shim ignores,
// because the journal still holds the frame. kind, id, method and params
// are the frame as parsed (kind 0: the line did not parse, or was
// discarded), line its text (mcp.Tracker).
func (t *Tracker) Took(kind wire.Kind, id wire.ID, method string, params []byte, line []byte, end int64) {
	switch kind {
	case wire.Request:
		t.request(id.Raw(), method, line, end)
	case wire.Notification:
		switch method {
		case "notifications/initialized":
			t.mu.Lock()
			if !t.closed {
				t.r.store64(offInitedAt, uint64(end))
				t.setFlag(flagInitialized)
			}
			t.mu.Unlock()
		case "notifications/cancelled":
			// MCP: no reply will come for that request.
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(params, &p) == nil {
				t.cancelled(envelope.Key(p.RequestID))
			}
		}
	}
	t.j.Took(end)
}

func (t *Tracker) setFlag(f uint32) {
	for {
		old := t.r.load32(offFlags)
		if t.r.casFlags(old, old|f) {
			return
		}
	}
}

func (t *Tracker) request(raw []byte, method string, line []byte, end int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	if !t.opened {
		// The session's era is its first request's: server/discover opens
		// a stateless (2026-07-28) one, which nothing is replayed for.
		t.opened = true
		t.r.store64(offOpenedAt, uint64(end))
		f := uint32(flagOpened)
		if method == "server/discover" {
			f |= flagModern
		}
		t.setFlag(f)
	}
	if method == "initialize" && !t.opening {
		t.opening = true
		if len(line) <= OpeningMax {
			copy(t.r.mem[openingAt:], line)
			t.r.store64(offOpeningA, uint64(end))
			t.r.store32(offOpenLen, uint32(len(line)))
		} else {
			_ = t.ctl(MsgOpening, U64(uint64(end)), line)
		}
	}
	t.seq++
	g := reg{slot: -1, seq: t.seq}
	if len(raw) <= slotIDMax {
		g.slot = t.freeSlot()
	}
	if g.slot >= 0 {
		s := t.r.slot(g.slot)
		binary.LittleEndian.PutUint32(s[slotIDLen:], uint32(len(raw)))
		binary.LittleEndian.PutUint64(s[slotSeq:], g.seq)
		binary.LittleEndian.PutUint64(s[slotEnd:], uint64(end))
		copy(s[slotID:], raw)
		t.r.store32(slotsAt+g.slot*slotSize+slotState, slotInFlight)
	} else {
		_ = t.ctl(MsgTrack, U64(g.seq), U64(uint64(end)), raw)
	}
	if method == "subscriptions/listen" {
		_ = t.ctl(MsgListen, U64(g.seq), line)
	}
	t.byRaw[string(raw)] = append(t.byRaw[string(raw)], g)
}

// freeSlot takes the lowest free slot (so a session touches few pages), or
// returns -1 when all are in use.
func (t *Tracker) freeSlot() int {
	for w, word := range t.used {
		if word != ^uint64(0) {
			b := bits.TrailingZeros64(^word)
			t.used[w] |= 1 << b
			return w*64 + b
		}
	}
	return -1
}

// drop forgets one registration; t.mu is held.
func (t *Tracker) drop(g reg) {
	if g.slot < 0 {
		_ = t.ctl(MsgUntrack, U64(g.seq))
		return
	}
	t.r.store32(slotsAt+g.slot*slotSize+slotState, slotFree)
	t.used[g.slot/64] &^= 1 << (g.slot % 64)
}

// Answered records that the reply to the oldest request in flight with id
// text raw has been written.
func (t *Tracker) Answered(raw []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	regs := t.byRaw[string(raw)]
	if len(regs) == 0 {
		return
	}
	t.drop(regs[0])
	if len(regs) == 1 {
		delete(t.byRaw, string(raw))
	} else {
		t.byRaw[string(raw)] = regs[1:]
	}
}

// Replying records, before a batch is staged, that it holds the replies
// with the id texts batch[s[0]:s[1]] for each s in ids: each answers the
// oldest request in flight with its id, which is marked slotReplying (or,
// tracked by the shim, named to it in MsgReplying). From here until
// Delivered, the shim tells whether those replies reached the client by the
// staging pipe and Staged (decision 0020, "Exactly one answer").
func (t *Tracker) Replying(batch []byte, ids [][2]int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	for _, s := range ids {
		raw := batch[s[0]:s[1]]
		regs := t.byRaw[string(raw)]
		if len(regs) == 0 {
			continue // not tracked: an answer to a cancelled request, a bad frame
		}
		g := regs[0]
		if len(regs) == 1 {
			delete(t.byRaw, string(raw))
		} else {
			t.byRaw[string(raw)] = regs[1:]
		}
		if g.slot >= 0 {
			t.r.store32(slotsAt+g.slot*slotSize+slotState, slotReplying)
		} else {
			_ = t.ctl(MsgReplying, U64(g.seq))
		}
		t.replying = append(t.replying, g)
	}
}

// Staged records that the batch Replying named is whole in the staging
// pipe: from now on an empty staging pipe means it was moved to the client.
func (t *Tracker) Staged() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.r.store32(offStaged, 1)
	}
}

// Delivered records that the batch is all in the client's stdout: its
// requests are forgotten, then the staging record cleared (in that order,
// so that no slot is ever slotReplying beside a cleared record that was
// not for it).
func (t *Tracker) Delivered() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	for _, g := range t.replying {
		t.drop(g)
	}
	t.replying = t.replying[:0]
	t.r.store32(offStaged, 0)
}

// Seq is the registration the next reply with id text raw answers (0:
// none): MsgFrame names it, so that the shim knows the reply it wrote.
func (t *Tracker) Seq(raw []byte) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if regs := t.byRaw[string(raw)]; len(regs) > 0 {
		return regs[0].seq
	}
	return 0
}

// cancelled forgets the oldest request whose id is key (envelope.Key: ids
// compared by JSON type and value, as cancellation compares them).
func (t *Tracker) cancelled(key string) {
	if key == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	var oldest string
	var first reg
	for raw, regs := range t.byRaw {
		if envelope.Key([]byte(raw)) == key && (oldest == "" || regs[0].seq < first.seq) {
			oldest, first = raw, regs[0]
		}
	}
	if oldest == "" {
		return
	}
	t.drop(first)
	if regs := t.byRaw[oldest]; len(regs) == 1 {
		delete(t.byRaw, oldest)
	} else {
		t.byRaw[oldest] = regs[1:]
	}
}

// Close ends the tracker's use of the region, and its Journal's: once it
// returns, neither touches the region again (interrupt the journal's
// source first, so that a Read under way ends).
func (t *Tracker) Close() {
	t.j.Close()
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
}
