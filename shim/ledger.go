package shim

import (
	"encoding/json"
	"sort"
	"strconv"
	"sync"

	"github.com/hearth-mcp/hearth/pkg/envelope"
)

// ledger is the shim's account of its client's session, kept so that the
// client gets exactly one answer to each request whatever daemon serves it
// (docs/decisions/0020-descriptor-passing.md, "Exactly one answer"): the
// requests owed a reply, the replies owed to frames the daemon answers
// without a pending id, the session's opening to replay to the next daemon,
// the listens to send it again, and the probe of a reconnect. It reads
// frames by their envelope alone (pkg/envelope), never decoding params or
// results. It has its own lock: the relay's reader settles replies without
// the shim's.
type ledger struct {
	mu   sync.Mutex
	owed map[string]owedReq // requests sent and not yet answered, by id key
	seq  uint64             // orders owed by when requests were sent
	// anon counts replies owed to frames the daemon answers without the id
	// of a pending request: malformed lines, invalid ids, over-long lines.
	// Without them, a bad last line before EOF would lose its error reply.
	anon int
	// given is the last connection (by gen) whose requests owed were taken
	// (take) to be answered -32004 or held for the next daemon: nothing its
	// reader still delivers reaches the client. That reader can hold
	// replies it read ahead from a daemon that has died while lost() ran on
	// a failed write; a reply of those the client would get besides its
	// -32004.
	given   int
	opening opening
	probe   probe
	// listens are the client's open subscriptions/listen requests (by id
	// key), as it sent them: a listen is no call that ran, so a reconnect
	// sends it again to the new daemon rather than failing it.
	listens map[string][]byte
}

// owedReq is a request the client is owed a reply to: n of them, when a
// client reused an id still in flight (the daemon answers the second with
// an error, so each is owed one reply).
type owedReq struct {
	id  json.RawMessage // as the client wrote it
	seq uint64
	n   int
}

// opening is how the client opened its session, for the next daemon.
type opening struct {
	frame       []byte // its initialize, replayed after a reconnect
	initialized bool
	// opened: the client has sent a request. modern: that first request
	// was server/discover, so the session is of the stateless era
	// (2026-07-28): a reconnect replays nothing and probes with
	// server/discover.
	opened, modern bool
}

// probe is the request that proves a new connection (replay): its id key,
// whose reply is swallowed, closed ack when that reply arrives, and how
// many replays there were (each probe's id is its own).
type probe struct {
	id      string
	ack     chan struct{}
	replays int
}

func newLedger() ledger { return ledger{owed: map[string]owedReq{}} }

// note records what a frame of the client's means for what it is owed:
// a request (and whether it opens the session, or is a listen), a
// cancellation (no reply will come), a frame the daemon answers without
// its id.
func (l *ledger) note(line []byte) {
	env, ok := envelope.Scan(line)
	l.mu.Lock()
	defer l.mu.Unlock()
	if !ok {
		l.anon++ // the daemon answers it, with a null id
		return
	}
	switch env.Kind() {
	case envelope.Invalid:
		l.anon++ // answered with an error, whatever its id
	case envelope.Request:
		l.seq++
		key := envelope.Key(env.ID)
		r, ok := l.owed[key]
		if !ok {
			r = owedReq{id: append(json.RawMessage(nil), env.ID...), seq: l.seq}
		}
		r.n++
		l.owed[key] = r
		if !l.opening.opened {
			l.opening.opened, l.opening.modern = true, env.Method == "server/discover"
		}
		if env.Method == "initialize" {
			l.opening.frame = append([]byte(nil), line...)
		}
		if env.Method == "subscriptions/listen" {
			if l.listens == nil {
				l.listens = map[string][]byte{}
			}
			l.listens[key] = append([]byte(nil), line...)
		}
	case envelope.Notification:
		switch env.Method {
		case "notifications/initialized":
			l.opening.initialized = true
		case "$/hearth/tooLarge":
			l.anon++ // the daemon answers payload_too_large in its place
		case "notifications/cancelled":
			// MCP: no reply will come; the request is no longer owed.
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(env.Params, &p) == nil {
				delete(l.owed, envelope.Key(p.RequestID))
				delete(l.listens, envelope.Key(p.RequestID))
			}
		}
	}
}

// settle marks a frame read from connection gen as delivered; it reports
// whether the client must not see it: the reply to the reconnect's probe,
// or anything from a connection given up (given).
func (l *ledger) settle(line []byte, gen int) (swallow bool) {
	env, ok := envelope.Scan(line)
	l.mu.Lock()
	defer l.mu.Unlock()
	if gen <= l.given {
		return true // its requests are answered as lost, or will be
	}
	if !ok || env.Method != "" || env.HasResult == env.HasError {
		return false // not a response: a notification or request for the client
	}
	key := envelope.Key(env.ID)
	if l.probe.id != "" && key == l.probe.id {
		l.probe.id = ""
		close(l.probe.ack)
		return true
	}
	if r, pending := l.owed[key]; pending && env.ID != nil {
		delete(l.listens, key) // a listen answered is over
		if r.n--; r.n > 0 {
			l.owed[key] = r
		} else {
			delete(l.owed, key)
		}
	} else if l.anon > 0 {
		l.anon-- // the reply to a frame the daemon found bad
	}
	return false
}

// owes counts the replies the client is still owed.
func (l *ledger) owes() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.owed) + l.anon
}

// take empties the requests owed, in the order they were sent, and gives
// up connection gen (given): a reply it still delivers would be a second
// answer. Replies owed to bad frames are forgotten: they have no id to
// answer.
func (l *ledger) take(gen int) []owedReq {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.given = gen
	reqs := make([]owedReq, 0, len(l.owed))
	for k, r := range l.owed {
		reqs = append(reqs, r)
		delete(l.owed, k)
	}
	// One reply per request: an id in flight twice is answered twice.
	l.anon = 0
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].seq < reqs[j].seq })
	return reqs
}

// restore puts back requests taken for a reconnect that failed.
func (l *ledger) restore(reqs []owedReq) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range reqs {
		key := envelope.Key(r.id)
		if have, ok := l.owed[key]; ok {
			r.n += have.n
		}
		l.owed[key] = r
	}
}

// listenFrame is the frame of the open listen the request owed r is.
func (l *ledger) listenFrame(r owedReq) ([]byte, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, ok := l.listens[envelope.Key(r.id)]
	return f, ok && r.n == 1
}

// listensOf splits requests owed into the frames of the open listens
// among them (sent to the next daemon again) and the rest (lost).
func (l *ledger) listensOf(owed []owedReq) (frames [][]byte, rest []owedReq) {
	for _, r := range owed {
		if f, ok := l.listenFrame(r); ok {
			frames = append(frames, f)
			continue
		}
		rest = append(rest, r)
	}
	return frames, rest
}

// session is how the client opened its session.
func (l *ledger) session() opening {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.opening
}

// replayName names the next replay's own request: its id is this string,
// which no client sends.
func (l *ledger) replayName() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.probe.replays++
	return "hearth-shim-replay-" + strconv.Itoa(l.probe.replays)
}

// expect makes the request under id the probe of a new connection: its
// reply is swallowed, and the channel returned closes when it arrives.
func (l *ledger) expect(id []byte) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.probe.id = envelope.Key(id) // compared with each reply's id, by key
	l.probe.ack = make(chan struct{})
	return l.probe.ack
}
