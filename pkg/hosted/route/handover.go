package route

import (
	"encoding/json"
	"errors"
	"time"
)

// Carried is what a router hands the router of the daemon that takes its
// upstream over (docs/decisions/0046-upstream-handover.md): the
// initialize done once, so that it is not done again, the ids hearth gave
// the upstream, so that a late reply to one is never taken for a new
// request's, and the state of the upstream that clients set on it.
type Carried struct {
	InitParams json.RawMessage `json:"initParams"`
	InitResult json.RawMessage `json:"initResult"`
	NextID     int64           `json:"nextId"`
	// Level is the log level the upstream was last set to ("": never);
	// Subscribed, the resource URIs it is subscribed to.
	Level      string   `json:"level,omitempty"`
	Subscribed []string `json:"subscribed,omitempty"`
	// Discover is a 2026-07-28 upstream's DiscoverResult (decision 0038),
	// in place of InitResult: the successor serves it as modern, and opens
	// its own listens on it.
	Discover json.RawMessage `json:"discover,omitempty"`
	// Clients holds, by tag, what each client a drain detached had set on
	// the upstream: the successor gives it back when it attaches again
	// (resume.go).
	Clients map[string]CarriedClient `json:"clients,omitempty"`
}

// ErrNotCarried: the router's upstream cannot be handed over as it is.
var ErrNotCarried = errors.New("only a ready upstream with no client's request in flight can be handed over")

// Carry returns what the successor's router needs to serve the upstream
// without initializing it again. Only a shared router whose upstream is
// ready and has no client's request in flight can be carried. A 2026-07-28
// upstream's listens of hearth's own are cancelled here
// (notifications/cancelled, queued before the descriptors are handed): the
// successor opens its own, and the upstream does not keep two sets.
func (r *Router) Carry() (Carried, error) {
	r.mu.Lock()
	defer r.unlock()
	if r.opts.Mode != Shared || r.link.state != ready {
		return Carried{}, ErrNotCarried
	}
	switch r.era.kind {
	case eraLegacy:
		if r.era.initResult == nil {
			return Carried{}, ErrNotCarried
		}
	case eraModern:
		if r.era.discover == nil {
			return Carried{}, ErrNotCarried
		}
	default:
		return Carried{}, ErrNotCarried
	}
	// A detached client's request was cancelled upstream; a late answer to
	// it finds no request of the successor's (NextID).
	if r.flight.anyClient() {
		return Carried{}, ErrNotCarried
	}
	if r.era.kind == eraModern {
		// Each client sends its own level and hearth its own listens: no
		// level or subscription is set on the upstream itself.
		r.cancelListens("the daemon hands this upstream to its successor")
		return Carried{InitParams: r.era.initParams, Discover: r.era.discover, NextID: r.flight.lastID}, nil
	}
	c := Carried{InitParams: r.era.initParams, InitResult: r.era.initResult, NextID: r.flight.lastID}
	if r.link.level >= 0 {
		c.Level = levelNames[r.link.level]
	}
	c.Subscribed = r.subs.subscribed()
	c.Clients = r.carriedClients()
	return c, nil
}

// Adopt gives the router an upstream that another daemon's router served
// (Carry): it is ready at once, with that initialize, and is not sent
// another. The upstream stays subscribed to what it was; a client that
// attaches again (Resume, by its tag) gets back its subscriptions, which
// are not sent to the upstream again, and its log level, if it attaches
// within ParkFor. Then what no client came back for is let go of
// (releaseParked): the upstream is unsubscribed from what no attached
// client subscribed to, and its level follows the attached clients'.
func (r *Router) Adopt(peer Peer, c Carried) {
	r.mu.Lock()
	defer r.unlock()
	r.connect(peer, ready)
	r.flight.lastID = max(r.flight.lastID, c.NextID)
	r.era.initParams = c.InitParams
	if c.Discover != nil {
		// A modern upstream: hearth's listens on it are this router's to
		// open (the previous daemon cancelled its own); the clients'
		// listens and subscriptions are opened again as they reconnect.
		r.era.modern(c.Discover)
		r.openListens()
		return
	}
	r.era.legacy(c.InitResult)
	r.link.level = levelOf(c.Level)
	r.adoptParked(c)
}

// CarriedClient is a parked client's state as it travels (Carried).
type CarriedClient struct {
	Subscribed []string `json:"subscribed,omitempty"`
	Level      string   `json:"level,omitempty"`
}

// carriedClients is what travels of the parked clients; r.mu is held.
func (r *Router) carriedClients() map[string]CarriedClient {
	if len(r.parked.clients) == 0 {
		return nil
	}
	out := make(map[string]CarriedClient, len(r.parked.clients))
	for tag, p := range r.parked.clients {
		cc := CarriedClient{Subscribed: p.subs}
		if p.level >= 0 {
			cc.Level = levelNames[p.level]
		}
		out[tag] = cc
	}
	return out
}

// adoptParked takes the parked clients and the subscriptions the upstream
// holds from what the previous daemon carried, and lets go of them after
// ParkFor; r.mu is held.
func (r *Router) adoptParked(c Carried) {
	clear(r.parked.clients)
	clear(r.subs.held)
	for _, uri := range c.Subscribed {
		r.subs.held[uri] = 0
	}
	for tag, cc := range c.Clients {
		p := parkedClient{level: levelOf(cc.Level)}
		for _, uri := range cc.Subscribed {
			if !r.subs.isHeld(uri) {
				continue // the upstream is not subscribed: nothing to give back
			}
			p.subs = append(p.subs, uri)
			r.subs.held[uri]++
		}
		r.parked.clients[tag] = p
	}
	if len(r.parked.clients) > 0 || len(r.subs.held) > 0 {
		if r.parked.release != nil {
			r.parked.release.Stop()
		}
		r.parked.release = time.AfterFunc(r.opts.ParkFor, r.releaseParked)
	}
}
