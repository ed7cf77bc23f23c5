package route

import (
	"slices"
	"time"
)

// A client that a drain detached comes back, to this daemon's successor
// after a hand-over (docs/decisions/0046-upstream-handover.md): its shim
// replays its initialize, never its resources/subscribe or its
// logging/setLevel, so what it had set on the upstream is kept for it by
// its tag (the shim's pid) and given back when it attaches again. The
// upstream, still subscribed, is sent no second subscribe.

// What is parked is kept for a while only (Options.ParkFor from Adopt): a
// shim comes back within seconds of the new daemon serving, or not at all
// (its client closed meanwhile). Kept longer, an entry would hold the
// upstream subscribed, and its level verbose, for nobody, and be given to
// whatever later shim is given the same pid.

// DefaultParkFor is how long an adopted router keeps parked clients.
const DefaultParkFor = time.Minute

// parking is what the clients a drain detached held, by client tag, kept
// for their return (under Router.mu); the URIs the upstream stays
// subscribed to for them are held in the subscriptions.
type parking struct {
	clients map[string]parkedClient
	// release lets go of them once ParkFor has passed since Adopt
	// (releaseParked).
	release *time.Timer
}

// parkedClient is what a client detached by a drain held.
type parkedClient struct {
	subs  []string
	level int // -1: it asked for none
}

// minLevel is the most verbose level a parked client asked for (-1:
// none).
func (p *parking) minLevel() int {
	m := -1
	for _, c := range p.clients {
		m = moreVerbose(m, c.level)
	}
	return m
}

// Park detaches the client as Detach does, but keeps its subscriptions
// (the upstream stays subscribed) and its log level under its tag, for
// Resume. A client without a tag is detached.
func (c *Client) Park() { c.detach(true) }

// park records c's subscriptions and level under its tag, and holds its
// URIs so that releasing its subscriptions sends no unsubscribe; r.mu is
// held.
func (r *Router) park(c *Client) {
	p := parkedClient{level: c.session.level}
	for uri := range c.subs.uris {
		p.subs = append(p.subs, uri)
		r.subs.held[uri]++
	}
	slices.Sort(p.subs)
	r.parked.clients[c.tag] = p
}

// Resume names the client (tag: who it is across daemons, "" for nobody
// known) and gives it back what it held when a drain detached it: its
// subscriptions, without subscribing the upstream again where it still is,
// and its log level. Call it before the client's first frame.
func (c *Client) Resume(tag string) {
	r := c.r
	r.mu.Lock()
	defer r.unlock()
	c.tag = tag
	p, ok := r.parked.clients[tag]
	if tag == "" || !ok || c.gone {
		return
	}
	delete(r.parked.clients, tag)
	for _, uri := range p.subs {
		held := r.subs.isHeld(uri)
		if n := r.subs.held[uri] - 1; n > 0 {
			r.subs.held[uri] = n
		} else {
			delete(r.subs.held, uri)
		}
		already := held || len(r.subs.byURI[uri]) > 0
		r.subs.add(c, uri)
		if !already && r.link.state == ready && r.era.kind == eraLegacy {
			// The upstream restarted since: subscribe it again (one not
			// ready yet is subscribed as it becomes ready).
			r.internalRequest("resources/subscribe", mustJSON(map[string]string{"uri": uri}))
		} else if !already && r.era.kind == eraModern {
			r.syncURIListens()
		}
	}
	c.session.level = p.level
}

// releaseParked lets go of what the clients that did not come back within
// ParkFor held: their entries go, the upstream is unsubscribed from every
// held URI no attached client subscribed to, and its level is made what
// the attached clients ask for, as when a client detaches.
func (r *Router) releaseParked() {
	r.mu.Lock()
	defer r.unlock()
	clear(r.parked.clients)
	for uri := range r.subs.held {
		delete(r.subs.held, uri)
		if len(r.subs.byURI[uri]) > 0 {
			continue // an attached client's subscription from now on
		}
		if r.link.state == ready && r.era.kind == eraLegacy {
			r.internalRequest("resources/unsubscribe", mustJSON(map[string]string{"uri": uri}))
		}
	}
	r.relaxLevel()
}
