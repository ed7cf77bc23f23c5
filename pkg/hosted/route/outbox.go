package route

import (
	"errors"
	"sync"
)

// Peer is how the router sends frames to one client or to the upstream: a
// client's session writer (pkg/mcp's Writer has these two methods, so a
// session's writer is a Peer as it is), an upstream's stdin, or a remote
// server's transport (pkg/remote). The router declares what it needs
// rather than import the protocol layer for it: nothing of sessions,
// tools or their schema library lies under the router. Only the outbox's
// owner calls it, so never two calls at once, and frames go out in the
// order they were queued.
//
// re labels a frame sent to a client with the key (jsonrpc.Key) of the
// client's request it belongs to: its reply, its progress, a log message
// or a server-to-client request it caused; "" for a frame of no request
// of the client's (a list change, a request no request of its caused).
// A transport that answers each request apart (Streamable HTTP) sends the
// frame on that request's stream; a stream transport, and the upstream,
// ignore it (docs/protocol.md, "Hosted servers over HTTP").
type Peer interface {
	// Write sends a frame, waiting for the peer to make room if need be.
	Write(frame []byte, re string) error
	// TryWrite sends a frame only if the peer can take it now without
	// waiting, and says whether it did; a peer that cannot tell says
	// false, and its frames are written by Write.
	TryWrite(frame []byte, re string) (bool, error)
}

// WriteFunc is a Peer that is always written through Write, and has no use
// for labels.
type WriteFunc func(frame []byte) error

func (f WriteFunc) Write(b []byte, _ string) error        { return f(b) }
func (f WriteFunc) TryWrite([]byte, string) (bool, error) { return false, nil }

// errOverflow: a peer let more than its limit pile up.
var errOverflow = errors.New("the client stopped reading: too much output queued for it")

// labelled is a queued frame and its label (Peer).
type labelled struct {
	f  []byte
	re string
}

// Who may write an outbox's frames: nobody yet, the goroutine that queued
// the first of them (it writes once it has released the router's lock), or
// the outbox's own goroutine.
const (
	ownerNone = iota
	ownerCaller
	ownerRunner
)

// outbox queues frames for one peer and writes them in order, so that the
// router never blocks on a slow client or on an upstream that stops reading
// its stdin, and a frame the peer can take at once costs no hand-off
// between goroutines: the goroutine that queued it writes it as soon as it
// has released the router's lock (Router.unlock), as long as the peer takes
// each frame without waiting (TryWrite); what the peer cannot take now is
// left to the outbox's own goroutine, which waits for room (Write). A peer
// that lets more than limit bytes pile up is given up (fail is called once,
// and nothing more is written).
//
// bytes counts what the outbox really holds: each frame's capacity (the
// memory it keeps alive, not just its length), from the moment it is
// queued until it has been written, so the frames the goroutine has taken
// to write count as much as those still queued. A flood to a reader that
// does not read is cut at the limit and one frame, not at twice the limit.
type outbox struct {
	mu     sync.Mutex
	q      []labelled
	bytes  int
	limit  int
	closed bool
	gaveUp bool // overflowed or a write failed: nothing more is written
	owner  int
	wake   chan struct{}
	peer   Peer
	fail   func(error)
}

func newOutbox(limit int, peer Peer, fail func(error)) *outbox {
	o := &outbox{limit: limit, peer: peer, fail: fail, wake: make(chan struct{}, 1)}
	go o.run()
	return o
}

// push queues a frame, labelled re (Peer). It reports whether the caller
// now owns the outbox: it must then call drain once it holds the router's
// lock no more.
func (o *outbox) push(frame []byte, re string) bool {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return false
	}
	o.q = append(o.q, labelled{frame, re})
	o.bytes += cap(frame)
	if o.bytes > o.limit {
		o.closed, o.gaveUp = true, true
		for _, f := range o.q {
			o.bytes -= cap(f.f) // dropped; what the goroutine writes now stays counted
		}
		o.q = nil
		o.mu.Unlock()
		o.poke()
		go o.fail(errOverflow)
		return false
	}
	if o.owner != ownerNone {
		o.mu.Unlock()
		return false
	}
	o.owner = ownerCaller
	o.mu.Unlock()
	return true
}

// drain writes, in the owning caller, the frames the peer takes at once;
// the first it cannot take, and all after it, go to the outbox's goroutine.
func (o *outbox) drain() {
	for {
		o.mu.Lock()
		if len(o.q) == 0 {
			o.owner = ownerNone
			closed := o.closed
			o.mu.Unlock()
			if closed {
				o.poke() // the goroutine may end
			}
			return
		}
		f := o.q[0]
		o.mu.Unlock()
		ok, err := o.peer.TryWrite(f.f, f.re)
		if err != nil {
			o.failed(err)
			return
		}
		o.mu.Lock()
		if !ok {
			o.owner = ownerRunner
			o.mu.Unlock()
			o.poke()
			return
		}
		if len(o.q) > 0 { // not emptied by an overflow meanwhile
			o.q[0] = labelled{}
			o.q = o.q[1:]
			o.bytes -= cap(f.f)
		}
		o.mu.Unlock()
	}
}

// close stops the outbox once what is queued is written.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	idle := o.owner == ownerNone
	o.mu.Unlock()
	if idle {
		o.poke()
	}
}

func (o *outbox) poke() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// held is how many bytes the outbox holds (tests).
func (o *outbox) held() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bytes
}

// failed gives the peer up after a write failed.
func (o *outbox) failed(err error) {
	o.mu.Lock()
	o.closed, o.gaveUp = true, true
	o.q = nil
	o.owner = ownerNone
	o.mu.Unlock()
	o.poke()
	o.fail(err)
}

// run is the outbox's goroutine: it writes what a caller handed it, waiting
// for room, until the outbox is closed and nothing is left to write.
func (o *outbox) run() {
	for range o.wake {
		for {
			o.mu.Lock()
			if o.owner != ownerRunner {
				end := o.closed && o.owner == ownerNone
				o.mu.Unlock()
				if end {
					return
				}
				break
			}
			if len(o.q) == 0 {
				o.owner = ownerNone
				end := o.closed
				o.mu.Unlock()
				if end {
					return
				}
				break
			}
			batch := o.q
			o.q = nil
			o.mu.Unlock()
			for i, f := range batch {
				if err := o.peer.Write(f.f, f.re); err != nil {
					o.failed(err)
					return
				}
				batch[i] = labelled{}
				o.mu.Lock()
				o.bytes -= cap(f.f)
				gaveUp := o.gaveUp // meanwhile: write no more
				o.mu.Unlock()
				if gaveUp {
					return
				}
			}
		}
	}
}
