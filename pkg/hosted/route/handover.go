package route

import (
	"encoding/json"
	"errors"
	"slices"
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
	if r.opts.Mode != Shared || r.state != ready {
		return Carried{}, ErrNotCarried
	}
	switch r.era {
	case eraLegacy:
		if r.initResult == nil {
			return Carried{}, ErrNotCarried
		}
	case eraModern:
		if r.discover == nil {
			return Carried{}, ErrNotCarried
		}
	default:
		return Carried{}, ErrNotCarried
	}
	for _, p := range r.pending {
		// A detached client's request was cancelled upstream; a late
		// answer to it finds no request of the successor's (NextID).
		if p.c != nil && !p.c.gone {
			return Carried{}, ErrNotCarried
		}
	}
	if r.era == eraModern {
		// Each client sends its own level and hearth its own listens: no
		// level or subscription is set on the upstream itself.
		r.cancelListens("the daemon hands this upstream to its successor")
		return Carried{InitParams: r.initParams, Discover: r.discover, NextID: r.nextID}, nil
	}
	c := Carried{InitParams: r.initParams, InitResult: r.initResult, NextID: r.nextID}
	if r.upLevel >= 0 {
		c.Level = levelNames[r.upLevel]
	}
	for uri := range r.subs {
		c.Subscribed = append(c.Subscribed, uri)
	}
	for uri := range r.held {
		if _, ok := r.subs[uri]; !ok {
			c.Subscribed = append(c.Subscribed, uri)
		}
	}
	slices.Sort(c.Subscribed)
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
	if r.up != nil {
		r.up.close()
	}
	r.up = r.upstreamBox(peer)
	r.state = ready
	r.failure = nil
	r.nextID = max(r.nextID, c.NextID)
	r.initParams = c.InitParams
	if c.Discover != nil {
		// A modern upstream: hearth's listens on it are this router's to
		// open (the previous daemon cancelled its own); the clients'
		// listens and subscriptions are opened again as they reconnect.
		r.era = eraModern
		r.discover, r.initResult = c.Discover, nil
		r.upCaps = parseUpstreamCaps(c.Discover)
		r.upLevel = -1
		r.openListens()
		return
	}
	r.era = eraLegacy
	r.discover = nil
	r.initResult = c.InitResult
	r.upCaps = parseUpstreamCaps(c.InitResult)
	r.upLevel = levelOf(c.Level)
	r.adoptParked(c)
	if len(r.parked) > 0 || len(r.held) > 0 {
		if r.release != nil {
			r.release.Stop()
		}
		r.release = time.AfterFunc(r.opts.ParkFor, r.releaseParked)
	}
}
