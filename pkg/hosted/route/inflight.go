package route

import (
	"encoding/json"
	"strconv"

	"github.com/hearth-mcp/hearth/pkg/envelope"
)

// inflight is what the router has asked of the upstream and not had
// answered: each request under an id of hearth's, and the progress tokens
// hearth gave them. Ids and tokens are never reused, not even across
// upstream processes or daemons (Carry hands the last id on), so a late
// answer or progress of one request is never taken for another's (under
// Router.mu).
type inflight struct {
	lastID  int64            // the last upstream id given
	lastTok int64            // the last progress token given
	byKey   map[string]*pend // by upstream id key
	byToken map[string]*pend // by the progress token hearth gave the upstream
}

// pend is a request sent to the upstream and not yet answered.
type pend struct {
	c       *Client         // nil: hearth's own request, or its client gave it up
	id      json.RawMessage // the client's id, exactly as it sent it
	clientK string          // its key
	method  string
	// internal is hearth's own request's answer (nil: a client's).
	internal func(result, errObj json.RawMessage)
	// progress: the token hearth gave the upstream for the client's own.
	progress struct {
		token  string
		client json.RawMessage
	}
	// list: the cache entry the answer fills (lists.go; key "" for none).
	list struct {
		key string
		gen int
	}
	uri   string    // a resources/subscribe's URI (shared instances)
	input inputPart // a legacy client's request to a modern upstream (mrtr.go)
	// bridge: a modern client's call to a legacy upstream (bridge.go).
	bridge *bridgeCall
}

func newInflight() inflight {
	return inflight{byKey: map[string]*pend{}, byToken: map[string]*pend{}}
}

// nextID gives the next upstream id: its text and its key.
func (f *inflight) nextID() ([]byte, string) {
	f.lastID++
	id := strconv.AppendInt(nil, f.lastID, 10)
	return id, envelope.Key(id)
}

// add sends p under a new upstream id, returning the id's text and key.
func (f *inflight) add(p *pend) ([]byte, string) {
	id, key := f.nextID()
	f.byKey[key] = p
	return id, key
}

// move gives the request under key old, p, a new upstream id (a retry),
// its progress token staying its own.
func (f *inflight) move(old string, p *pend) ([]byte, string) {
	delete(f.byKey, old)
	return f.add(p)
}

// own records a request of hearth's own whose answer goes to answer
// (nil: dropped), and returns its id.
func (f *inflight) own(method string, answer func(result, errObj json.RawMessage)) ([]byte, string) {
	if answer == nil {
		answer = func(json.RawMessage, json.RawMessage) {}
	}
	return f.add(&pend{method: method, internal: answer})
}

// get is the request in flight under upstream key k (nil: none).
func (f *inflight) get(k string) *pend { return f.byKey[k] }

// remove forgets the request under k and its progress token.
func (f *inflight) remove(k string) {
	if p := f.byKey[k]; p != nil {
		f.dropToken(p)
	}
	delete(f.byKey, k)
}

// giveToken gives p a progress token of hearth's for the client's own
// (client: its text) and returns it.
func (f *inflight) giveToken(p *pend, client json.RawMessage) string {
	f.lastTok++
	p.progress.token = "hearth-" + strconv.FormatInt(f.lastTok, 10)
	p.progress.client = client
	f.byToken[p.progress.token] = p
	return p.progress.token
}

// byTok is the request that hearth's progress token tok was given to (nil:
// none, or answered).
func (f *inflight) byTok(tok string) *pend { return f.byToken[tok] }

// dropToken forgets p's progress token: no progress reaches its client
// any more.
func (f *inflight) dropToken(p *pend) {
	if p.progress.token != "" {
		delete(f.byToken, p.progress.token)
	}
}

// clear forgets every request (their upstream is gone); the ids go on
// from where they were.
func (f *inflight) clear() {
	clear(f.byKey)
	clear(f.byToken)
}

// busy counts the requests in flight but hearth's own listens, which stay
// open while the upstream runs (Busy).
func (f *inflight) busy() int {
	n := 0
	for _, p := range f.byKey {
		if p.internal == nil || p.method != "subscriptions/listen" {
			n++
		}
	}
	return n
}

// anyClient reports whether a request in flight is an attached client's.
func (f *inflight) anyClient() bool {
	for _, p := range f.byKey {
		if p.c != nil && !p.c.gone {
			return true
		}
	}
	return false
}
