package route

import (
	"encoding/json"
	"slices"
)

// Resource subscriptions on a shared upstream are counted per client
// (decision 0034): only the first subscriber's resources/subscribe reaches
// a legacy upstream, and only the last one's unsubscribe; a modern one is
// told of them by hearth's own listens (modern.go). A client that a drain
// detached keeps its subscriptions while it is parked (resume.go): the
// upstream stays subscribed for it, held.

// subscriptions are who is subscribed to what (under Router.mu).
type subscriptions struct {
	byURI map[string]map[*Client]struct{} // the attached clients subscribed to each URI
	// held counts, per URI the upstream is subscribed to for no attached
	// client, the parked clients that hold it (0: the previous daemon
	// handed the upstream over subscribed, and no parked client claims
	// it).
	held map[string]int
}

// clientSubs are one client's: the URIs it subscribed to, and a modern
// client's own listens, served by hearth (modern.go), by id key.
type clientSubs struct {
	uris    map[string]bool
	listens map[string]*clientListen
}

func newSubscriptions() subscriptions {
	return subscriptions{byURI: map[string]map[*Client]struct{}{}, held: map[string]int{}}
}

// add subscribes c to uri.
func (s *subscriptions) add(c *Client, uri string) {
	subs := s.byURI[uri]
	if subs == nil {
		subs = map[*Client]struct{}{}
		s.byURI[uri] = subs
	}
	subs[c] = struct{}{}
	c.subs.uris[uri] = true
}

// remove unsubscribes c from uri; it reports whether no attached client is
// subscribed to it any more.
func (s *subscriptions) remove(c *Client, uri string) (last bool) {
	delete(c.subs.uris, uri)
	subs := s.byURI[uri]
	if subs == nil {
		return true
	}
	delete(subs, c)
	if len(subs) > 0 {
		return false
	}
	delete(s.byURI, uri)
	return true
}

// isHeld: the upstream is subscribed to uri for a parked client, or was
// handed over subscribed to it.
func (s *subscriptions) isHeld(uri string) bool {
	_, ok := s.held[uri]
	return ok
}

// upstreamHas: the upstream is subscribed to uri (for an attached client
// or a held one).
func (s *subscriptions) upstreamHas(uri string) bool {
	return len(s.byURI[uri]) > 0 || s.isHeld(uri)
}

// unhold: a client subscribes to a URI held for nobody in particular (the
// upstream was subscribed when it was handed over); it is the client's
// subscription from now on.
func (s *subscriptions) unhold(uri string) {
	if n, ok := s.held[uri]; ok && n == 0 {
		delete(s.held, uri)
	}
}

// subscribed lists, sorted, the URIs the upstream is subscribed to.
func (s *subscriptions) subscribed() []string {
	var out []string
	for uri := range s.byURI {
		out = append(out, uri)
	}
	for uri := range s.held {
		if _, ok := s.byURI[uri]; !ok {
			out = append(out, uri)
		}
	}
	slices.Sort(out)
	return out
}

// subscription counts a client's resources/subscribe or unsubscribe to a
// legacy upstream (a shared router's, before the request goes on): only
// the first subscriber's goes upstream, and only the last one's
// unsubscribe. It reports whether the request was answered here; r.mu is
// held.
func (c *Client) subscription(q *request) bool {
	r := c.r
	uri := q.str("uri")
	if uri == "" {
		return false // let the upstream word the error
	}
	if q.msg.Method == "resources/subscribe" {
		already := c.subs.uris[uri] || r.subs.upstreamHas(uri)
		r.subs.unhold(uri)
		r.subs.add(c, uri)
		if already {
			// The upstream is subscribed already (for another client, or
			// for one detached by a drain: resume.go).
			c.answer(q.msg.ID, json.RawMessage(`{}`))
			return true
		}
		return false
	}
	if !c.subs.uris[uri] || !r.subs.remove(c, uri) || r.subs.isHeld(uri) {
		// Not its subscription, another client's too, or one a parked
		// client holds: the upstream stays subscribed.
		c.answer(q.msg.ID, json.RawMessage(`{}`))
		return true
	}
	return false
}

// subscribeRefused: the upstream refused a client's resources/subscribe,
// so the client holds no subscription; r.mu is held.
func (r *Router) subscribeRefused(c *Client, uri string) { r.subs.remove(c, uri) }

// unsubscribe releases a client's subscription as it goes; the upstream is
// unsubscribed when nobody else holds it; r.mu is held.
func (r *Router) unsubscribe(c *Client, uri string) {
	if !r.subs.remove(c, uri) || r.subs.isHeld(uri) || r.bridge.subs[uri] {
		return // another client's, or a client detached by a drain holds it still
	}
	if r.era.kind == eraModern {
		r.syncURIListens()
		return
	}
	if r.link.state == ready {
		r.internalRequest("resources/unsubscribe", mustJSON(map[string]string{"uri": uri}))
	}
}
