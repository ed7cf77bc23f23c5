package route

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// The upstream seam: whatever serves the instance (a child's pipes, a
// remote server's transport) is given to the router as a Peer to write
// frames to (Up, or Adopt for one handed over), and hands the router each
// line it answers with (FromUpstream, TooLarge); the instance says when it
// is gone (Down). The router asks for one through Hooks.Wake when a
// request needs it, and tells the instance when it is ready (Hooks.Ready)
// or must be stopped (Hooks.Trouble). Nothing here knows of processes.

// The upstream's states.
const (
	down     = iota // no upstream
	starting        // an upstream runs; its initialize is not answered yet
	ready
)

// link is the router's side of the current upstream (under Router.mu):
// its state, its outbox, the failure the instance is marked with, the log
// level it was set to, and what waits for it to be ready.
type link struct {
	state   int
	out     *outbox // to the upstream (nil: none)
	failure error   // set: the instance failed, requests are answered with it
	level   int     // the level the upstream was last set to (-1: never)
	// waiting are the clients whose initialize waits for the upstream's;
	// queued the requests held until it is ready.
	waiting []waiter
	queued  []queuedReq
}

type waiter struct {
	c  *Client
	id json.RawMessage
}

// queuedReq is a client request held until the upstream is ready, and
// its method's entry (methods.go).
type queuedReq struct {
	c *Client
	q *request
	m *method
}

func newLink() link { return link{level: -1} }

// pendingOf counts c's requests waiting for the upstream (its initialize
// and its queued requests).
func (l *link) pendingOf(c *Client) int {
	n := 0
	for _, q := range l.queued {
		if q.c == c {
			n++
		}
	}
	for _, w := range l.waiting {
		if w.c == c {
			n++
		}
	}
	return n
}

// takeOf removes c's waiting initialize and queued requests, and returns
// the ids they are to be answered under, in the order they came.
func (l *link) takeOf(c *Client) (initIDs []json.RawMessage, queued []*request) {
	l.queued = slices.DeleteFunc(l.queued, func(q queuedReq) bool {
		if q.c == c {
			queued = append(queued, q.q)
		}
		return q.c == c
	})
	l.waiting = slices.DeleteFunc(l.waiting, func(w waiter) bool {
		if w.c == c {
			initIDs = append(initIDs, w.id)
		}
		return w.c == c
	})
	return initIDs, queued
}

// dropWaiting forgets c's waiting initialize (c went away).
func (l *link) dropWaiting(c *Client) {
	l.waiting = slices.DeleteFunc(l.waiting, func(w waiter) bool { return w.c == c })
}

// unqueue drops c's queued request under client id key k, reporting
// whether there was one: a cancelled request that never reached the
// upstream gets no answer.
func (l *link) unqueue(c *Client, k string) bool {
	i := slices.IndexFunc(l.queued, func(q queuedReq) bool { return q.c == c && q.q.msg.ID.Key() == k })
	if i >= 0 {
		l.queued = slices.Delete(l.queued, i, i+1)
	}
	return i >= 0
}

// Up gives the router a new upstream, written through peer: it sends the
// upstream its initialize (with the first client's parameters) and, once
// answered, the requests that waited.
func (r *Router) Up(peer Peer) {
	r.mu.Lock()
	defer r.unlock()
	r.connect(peer, starting)
	r.era.kind = eraUnknown
	if r.era.initParams == nil {
		return // nobody asked yet; the first initialize will
	}
	r.sendInitialize()
}

// connect makes peer the upstream, in state; r.mu is held.
func (r *Router) connect(peer Peer, state int) {
	if r.link.out != nil {
		r.link.out.close()
	}
	r.link.out = r.upstreamBox(peer)
	r.link.state = state
	r.link.failure = nil
	r.link.level = -1
}

// upstreamBox is the outbox to a new upstream; r.mu is held.
func (r *Router) upstreamBox(peer Peer) *outbox {
	var box *outbox
	box = newOutbox(r.opts.UpstreamLimit, peer, func(err error) {
		if errors.Is(err, errOverflow) {
			r.mu.Lock()
			if r.link.out == box {
				r.opts.Trouble(fmt.Errorf("%s stopped reading its stdin", r.opts.Name))
			}
			r.unlock()
		}
		// A failed write: the upstream is gone, and its exit says so.
	})
	return box
}

// Down tells the router its upstream is gone (why names the cause, with the
// server and its log). Every request in flight or queued is answered with
// the error at once; the next request asks for a new upstream (Wake).
// failed marks the instance failed: until Up, requests get the error
// without a new upstream being asked for.
func (r *Router) Down(why error, failed bool) {
	r.mu.Lock()
	defer r.unlock()
	r.link.state = down
	if r.link.out != nil {
		r.link.out.close()
		r.link.out = nil
	}
	if failed {
		r.link.failure = why
	}
	msg := rpcError(CodeUpstream, why.Error())
	for _, w := range r.link.waiting {
		w.c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(w.id), nil, msg))
	}
	r.link.waiting = nil
	for _, q := range r.link.queued {
		q.c.push(jsonrpc.ResponseFrame(q.q.msg.ID, nil, msg))
	}
	r.link.queued = nil
	for _, p := range r.flight.byKey {
		if p.c != nil && !p.c.gone && !p.isParked() {
			p.c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(p.id), nil, msg))
			delete(p.c.inflight, p.clientK)
		}
	}
	r.flight.clear()
	r.clearBridge()
	// Requests the old upstream made of clients: their answers have nowhere
	// to go.
	r.s2c.clear()
	r.era.awaiting = ""
	r.era.listens.forget()
	clear(r.subs.held) // a new upstream is subscribed to nothing
	r.lists.changed()
}

// ClearFailure lets the next request ask for an upstream again after the
// instance was marked failed (a restart by hand).
func (r *Router) ClearFailure() {
	r.mu.Lock()
	r.link.failure = nil
	r.unlock()
}

// needUpstream gets an upstream going for a request that waits: a new
// one, or the initialize of one started before anybody asked; r.mu is
// held.
func (r *Router) needUpstream() {
	switch r.link.state {
	case down:
		r.opts.Wake()
	case starting:
		if r.era.awaiting == "" && r.link.out != nil {
			r.sendInitialize()
		}
	}
}

// queue holds a client's request until the upstream is ready; r.mu is
// held.
func (r *Router) queue(q queuedReq) {
	r.link.queued = append(r.link.queued, q)
	r.needUpstream()
}

// sendUp sends a frame to the upstream if there is one; r.mu is held.
func (r *Router) sendUp(frame []byte) {
	if r.link.out != nil && r.link.out.push(frame, "") {
		r.mu.claimed = append(r.mu.claimed, r.link.out)
	}
}

// internalRequest sends a request of hearth's own whose answer is dropped;
// r.mu is held.
func (r *Router) internalRequest(method string, params json.RawMessage) {
	if r.link.out == nil {
		return
	}
	id, _ := r.flight.own(method, nil)
	r.sendUp(jsonrpc.RequestFrame(jsonrpc.RawID(id), method, params))
}

// Log levels (RFC 5424 order, most verbose first).
var levelNames = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func levelOf(name string) int {
	for i, n := range levelNames {
		if n == name {
			return i
		}
	}
	return -1
}

// minLevel is the most verbose level any client asked for, attached or
// parked (-1: none asked); r.mu is held.
func (r *Router) minLevel() int { return moreVerbose(r.clients.minLevel(), r.parked.minLevel()) }

// relaxLevel sets the upstream to a less verbose level when no client asks
// for its level any more; r.mu is held.
func (r *Router) relaxLevel() {
	if old := r.link.level; old >= 0 && r.era.kind != eraModern {
		if lvl := r.minLevel(); lvl > old && r.link.state == ready {
			r.link.level = lvl
			r.internalRequest("logging/setLevel", mustJSON(map[string]string{"level": levelNames[lvl]}))
		}
	}
}
