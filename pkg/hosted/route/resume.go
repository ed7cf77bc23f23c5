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

// parkedClient is what a client detached by a drain held.
type parkedClient struct {
	subs  []string
	level int // -1: it asked for none
}

// CarriedClient is a parked client's state as it travels (Carried).
type CarriedClient struct {
	Subscribed []string `json:"subscribed,omitempty"`
	Level      string   `json:"level,omitempty"`
}

// Park detaches the client as Detach does, but keeps its subscriptions
// (the upstream stays subscribed) and its log level under its tag, for
// Resume. A client without a tag is detached.
func (c *Client) Park() { c.detach(true) }

// park records c's subscriptions and level under its tag, and holds its
// URIs so that releasing its subscriptions sends no unsubscribe; r.mu is
// held.
func (r *Router) park(c *Client) {
	p := parkedClient{level: c.level}
	for uri := range c.subs {
		p.subs = append(p.subs, uri)
		r.held[uri]++
	}
	slices.Sort(p.subs)
	r.parked[c.tag] = p
}

// unhold: a client subscribes to a URI held for nobody in particular (the
// upstream was subscribed when it was handed over); it is the client's
// subscription from now on; r.mu is held.
func (r *Router) unhold(uri string) {
	if n, ok := r.held[uri]; ok && n == 0 {
		delete(r.held, uri)
	}
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
	p, ok := r.parked[tag]
	if tag == "" || !ok || c.gone {
		return
	}
	delete(r.parked, tag)
	for _, uri := range p.subs {
		_, held := r.held[uri]
		if n := r.held[uri] - 1; n > 0 {
			r.held[uri] = n
		} else {
			delete(r.held, uri)
		}
		subs := r.subs[uri]
		if subs == nil {
			subs = map[*Client]struct{}{}
			r.subs[uri] = subs
		}
		already := held || len(subs) > 0
		subs[c] = struct{}{}
		c.subs[uri] = true
		if !already && r.state == ready && r.era == eraLegacy {
			// The upstream restarted since: subscribe it again (one not
			// ready yet is subscribed as it becomes ready).
			r.internalRequest("resources/subscribe", mustJSON(map[string]string{"uri": uri}))
		} else if !already && r.era == eraModern {
			r.syncURIListens()
		}
	}
	c.level = p.level
}

// carriedClients is what travels of the parked clients; r.mu is held.
func (r *Router) carriedClients() map[string]CarriedClient {
	if len(r.parked) == 0 {
		return nil
	}
	out := make(map[string]CarriedClient, len(r.parked))
	for tag, p := range r.parked {
		cc := CarriedClient{Subscribed: p.subs}
		if p.level >= 0 {
			cc.Level = levelNames[p.level]
		}
		out[tag] = cc
	}
	return out
}

// adoptParked takes the parked clients and the subscriptions the upstream
// holds from what the previous daemon carried; r.mu is held.
func (r *Router) adoptParked(c Carried) {
	clear(r.parked)
	clear(r.held)
	for _, uri := range c.Subscribed {
		r.held[uri] = 0
	}
	for tag, cc := range c.Clients {
		p := parkedClient{level: levelOf(cc.Level)}
		for _, uri := range cc.Subscribed {
			if _, ok := r.held[uri]; !ok {
				continue // the upstream is not subscribed: nothing to give back
			}
			p.subs = append(p.subs, uri)
			r.held[uri]++
		}
		r.parked[tag] = p
	}
}

// releaseParked lets go of what the clients that did not come back within
// ParkFor held: their entries go, the upstream is unsubscribed from every
// held URI no attached client subscribed to, and its level is made what
// the attached clients ask for, as when a client detaches.
func (r *Router) releaseParked() {
	r.mu.Lock()
	defer r.unlock()
	clear(r.parked)
	for uri := range r.held {
		delete(r.held, uri)
		if len(r.subs[uri]) > 0 {
			continue // an attached client's subscription from now on
		}
		if r.state == ready && r.era == eraLegacy {
			r.internalRequest("resources/unsubscribe", mustJSON(map[string]string{"uri": uri}))
		}
	}
	r.relaxLevel()
}
