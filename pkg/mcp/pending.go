package mcp

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// pending is the session's part that knows what is in flight: the requests
// admitted and not yet answered and the open subscriptions, by id key (so
// that a duplicate id is refused and a cancellation finds its request), and
// what those requests hold against the connection's bounds.
type pending struct {
	mu       sync.Mutex
	inflight map[string]*entry
	// subs are the connection's open subscriptions/listen streams (each
	// also in inflight under its key).
	subs map[string]*subscription

	count atomic.Int64 // requests queued, waiting or running that will execute
	bytes atomic.Int64 // what those requests' messages hold (Message.Size)
}

func newPending() pending {
	return pending{inflight: map[string]*entry{}, subs: map[string]*subscription{}}
}

// has reports whether a request with this key is in flight.
func (p *pending) has(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.inflight[key]
	return ok
}

// get returns the request in flight under key (nil: none).
func (p *pending) get(key string) *entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inflight[key]
}

// add registers e under its key; false when the key is already in flight.
func (p *pending) add(e *entry) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, dup := p.inflight[e.key]; dup {
		return false
	}
	p.inflight[e.key] = e
	return true
}

// remove forgets e (and its subscription, if it is one); a later request
// that reused the key is left alone. It reports whether e was a
// subscription still open.
func (p *pending) remove(e *entry) (wasOpen bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inflight[e.key] == e {
		delete(p.inflight, e.key)
		_, wasOpen = p.subs[e.key]
		delete(p.subs, e.key)
	}
	return wasOpen
}

// admit registers a request that will execute (it is then pending until
// release), or returns the reply refusing it: the session is draining, the
// connection holds too much, or its id is still pending.
func (s *registry) admit(e *entry) []byte {
	if s.life.draining.Load() {
		e.params, e.paramsDoc = nil, nil
		return s.shuttingDown(e.id)
	}
	p := &s.pend
	count := p.count.Load()
	if count >= int64(s.srv.opts.QueueDepth) ||
		(count > 0 && p.bytes.Load()+e.size > s.srv.opts.QueueBytes) {
		e.params, e.paramsDoc = nil, nil // answered from here: hold nothing
		s.srv.errors.Add(1)
		return s.overloaded(e)
	}
	// The daemon-wide bound: what every connection's pending requests hold
	// together. A connection with nothing pending is always served.
	if !s.srv.held.Take(e.size, count == 0) {
		e.params, e.paramsDoc = nil, nil
		s.srv.errors.Add(1)
		s.srv.overloads.Add(1)
		return s.daemonOverloaded(e)
	}
	e.ctx, e.cancel = context.WithCancel(s.life.base)
	if !p.add(e) {
		e.cancel()
		s.srv.held.Give(e.size)
		e.params, e.paramsDoc = nil, nil
		s.srv.errors.Add(1)
		return duplicateID(e.id)
	}
	p.bytes.Add(e.size)
	p.count.Add(1)
	return nil
}

// release ends an admitted request's hold on the session: its id may be used
// again and its frame no longer counts. It is called exactly once per
// admitted entry, before its reply is written (a client that has the reply
// may reuse the id at once).
func (s *registry) release(e *entry) {
	s.pend.remove(e)
	e.cancel()
	// The reply is all that is left to send: let the frame go.
	e.params, e.paramsDoc = nil, nil
	s.pend.bytes.Add(-e.size)
	s.srv.held.Give(e.size)
	s.pend.count.Add(-1)
}

// duplicateID refuses a request whose id is that of a request still in
// flight on the connection: its own code, so that a client can tell this
// reply from the one its first request will get.
func duplicateID(id jsonrpc.ID) []byte {
	return jsonrpc.ErrorFrame(id, &jsonrpc.Error{Code: jsonrpc.CodeDuplicateID,
		Message: "Invalid Request: a request with this id is still in flight on this connection; this one was not run (ids must be unique among requests in flight)",
		Data:    map[string]string{"code": "DUPLICATE_ID"}})
}

func (s *registry) overloaded(e *entry) []byte {
	return s.overloadedReply(e, "the connection's queue is full; retry later or send fewer requests at once")
}

const daemonOverloadedMessage = "the daemon holds as many unanswered requests as it may; retry later"

// daemonOverloaded refuses a request because every connection's pending requests together hold the
// daemon-wide limit (Options.MaxHeldBytes).
func (s *registry) daemonOverloaded(e *entry) []byte {
	return s.overloadedReply(e, daemonOverloadedMessage)
}

// overloadedReply is QUEUE_OVERLOADED: an isError result for tools/call,
// error -32001 otherwise (id null when e is nil).
func (s *registry) overloadedReply(e *entry, msg string) []byte {
	if e != nil && e.method == "tools/call" {
		res, _ := toolResult((&tool.Error{Code: tool.QueueOverloaded, Message: msg}).Object(), true)
		return s.ok(e, res)
	}
	var id jsonrpc.ID // null
	if e != nil {
		id = e.id
	}
	return overloadedError(id, msg)
}

func overloadedError(id jsonrpc.ID, msg string) []byte {
	return jsonrpc.ErrorFrame(id, &jsonrpc.Error{Code: jsonrpc.CodeOverloaded, Message: msg, Data: map[string]string{"code": string(tool.QueueOverloaded)}})
}

// daemonOverloadedLine refuses a line read only in part because every
// connection's pending requests together hold the daemon-wide limit
// (Options.MaxHeldBytes).
func daemonOverloadedLine() []byte {
	return overloadedError(jsonrpc.ID{}, daemonOverloadedMessage)
}
