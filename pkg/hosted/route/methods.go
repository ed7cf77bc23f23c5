package route

import (
	"encoding/json"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// What the router does with each method it does more with than pass on,
// in one place: the client's requests (a table of the stages each goes
// through, Client.request), the client's notifications and the
// upstream's. A method not named here passes as it is: a request under an
// id of hearth's, with its progress token replaced, a notification to the
// upstream once it is ready, or to every client.

// method is what the router does with a client's request of one method,
// stage by stage (Client.request, Router.forward). A stage the entry
// leaves nil passes the request on.
type method struct {
	// local answers the request whatever the upstream's state.
	local func(*Client, *request)
	// legacy answers a request a legacy upstream has no such method for.
	legacy func(*Client, *request)
	// shared is what a shared router does first (counts, rewrites, answers
	// from its cache); it reports whether it answered.
	shared func(*Client, *request) bool
	// catalog answers from the catalog (modern: a 2026-07-28 upstream's)
	// while no upstream is ready; it reports whether it did.
	catalog func(c *Client, q *request, modern bool) bool
	// onModern answers a legacy client's request a modern upstream has no
	// such method for (hearth keeps what it sets); it reports whether it
	// did. fromModern serves a modern client's request of the method on a
	// modern upstream itself.
	onModern   func(*Client, *request) bool
	fromModern func(*Client, *request)
	// forwarded notes, of the request going upstream as params, what its
	// answer needs (the cache entry it fills, the subscription a refusal
	// releases, what a retry with input sends again).
	forwarded func(c *Client, p *pend, q *request, params json.RawMessage)
}

// passed is the entry of a method the table does not name.
var passed = &method{}

// methods are the client requests the router does more with than forward.
var methods = func() map[string]*method {
	m := map[string]*method{
		"ping":       {local: (*Client).ping},
		"initialize": {local: (*Client).initialize},
		// A legacy upstream's is answered from its initialize result
		// (bridge.go); a modern catalog answers the probe while fresh.
		"server/discover": {legacy: (*Client).discoverFromLegacy, catalog: (*Client).discoverFromCatalog},
		// A modern client's listens are fed from hearth's own.
		"subscriptions/listen": {legacy: (*Client).listenOnLegacy, fromModern: (*Client).listen, catalog: (*Client).listenFromCatalog},
		"logging/setLevel": {shared: (*Client).setLevel, catalog: (*Client).levelFromCatalog,
			onModern: (*Client).levelOnModern},
		"resources/subscribe": {shared: (*Client).subscription, onModern: (*Client).subscriptionOnModern,
			forwarded: (*Client).subscribing},
		"resources/unsubscribe": {shared: (*Client).subscription, onModern: (*Client).subscriptionOnModern},
	}
	// The requests a modern upstream may answer with an InputRequiredResult
	// (basic/patterns/mrtr, "Supported Requests"; mrtr.go).
	for _, name := range inputMethods {
		m[name] = &method{forwarded: (*Client).mayAskForInput}
	}
	for i := range listMethods {
		l := &listMethods[i]
		m[l.method] = &method{shared: (*Client).listFromCache, catalog: (*Client).listFromCatalog,
			forwarded: func(c *Client, p *pend, q *request, _ json.RawMessage) { c.willCache(l, p, q) }}
	}
	return m
}()

// methodOf is a request method's entry (passed: none).
func methodOf(name string) *method {
	if m := methods[name]; m != nil {
		return m
	}
	return passed
}

// clientNotes take the client's notifications of a method: each reports
// whether it took the notification (else it goes to a ready upstream).
var clientNotes = map[string]func(*Client, *jsonrpc.Message) bool{
	"notifications/initialized":        (*Client).initializedNote,
	"notifications/cancelled":          (*Client).cancelled,
	"notifications/roots/list_changed": (*Client).rootsChanged,
}

// upstreamNotes route the upstream's notifications of a method (any other
// goes to every client).
var upstreamNotes = map[string]func(*Router, *jsonrpc.Message){
	"notifications/progress":               (*Router).progressNote,
	"notifications/cancelled":              (*Router).upstreamCancelled,
	"notifications/message":                (*Router).logMessage,
	"notifications/resources/updated":      (*Router).resourceUpdatedNote,
	"notifications/tools/list_changed":     (*Router).listChangedNote,
	"notifications/prompts/list_changed":   (*Router).listChangedNote,
	"notifications/resources/list_changed": (*Router).listChangedNote,
	// An answer to hearth's own listen: clients had theirs from hearth.
	"notifications/subscriptions/acknowledged": func(*Router, *jsonrpc.Message) {},
}

// ping is answered by the router, whatever the upstream.
func (c *Client) ping(q *request) { c.answer(q.msg.ID, json.RawMessage(`{}`)) }

// initialize answers a client's initialize: from the cached result when the
// upstream has been initialized, else once it is; r.mu is held.
func (c *Client) initialize(q *request) {
	r := c.r
	msg := q.msg
	c.session.inited, c.session.modern = true, false
	c.session.caps = parseClientCaps(msg.Params)
	c.session.initParams, c.session.meta = msg.Params, nil
	if r.era.answered() && r.link.failure == nil {
		// The cached answer, even while a crashed upstream restarts; a
		// single client's upstream is talked to as it is.
		c.answer(msg.ID, r.era.answer(c, r.opts.Name))
		return
	}
	if r.link.failure != nil {
		c.fail(msg.ID, CodeUpstream, r.link.failure.Error())
		return
	}
	if r.era.initParams == nil {
		r.era.initParams = upstreamInitParams(msg.Params, r.opts.Mode)
	}
	r.link.waiting = append(r.link.waiting, waiter{c: c, id: msg.ID.Raw()})
	r.needUpstream()
}

// setLevel records the level a client asked of a shared router and
// rewrites the request to set the upstream to the most verbose level any
// client asked for; the request goes on.
func (c *Client) setLevel(q *request) bool {
	lvl := levelOf(q.str("level"))
	if lvl < 0 {
		return false // let the upstream word the error
	}
	c.session.level = lvl
	min := c.r.minLevel()
	c.r.link.level = min
	q.setParam("level", quote(levelNames[min]))
	return false
}

// subscribing notes a shared router's resources/subscribe going upstream:
// should the upstream refuse it, the client holds no subscription.
func (c *Client) subscribing(p *pend, q *request, _ json.RawMessage) {
	if c.r.opts.Mode == Shared {
		p.uri = q.str("uri")
	}
}

// willCache notes a shared router's list request going upstream: its
// answer is cached while the upstream announces the list's changes.
func (c *Client) willCache(l *listMethod, p *pend, q *request) {
	if r := c.r; r.opts.Mode == Shared && r.cacheable(l) {
		p.list.key, p.list.gen = c.cacheKey(q), r.lists.gen
	}
}

// mayAskForInput notes what a translated request sent, for the retry an
// InputRequiredResult asks for (mrtr.go).
func (c *Client) mayAskForInput(p *pend, q *request, params json.RawMessage) {
	if p.input.translated {
		p.input.sent = params
	}
	if q.modern && c.r.era.kind == eraLegacy {
		p.bridge = &bridgeCall{digest: requestDigest(p.method, q.msg.Params)} // what a requestState binds to (bridge.go)
	}
}

// The catalog's stage (catalog.go): answered only while no upstream is
// ready, on a shared router with a catalog; a modern client is answered
// only from a modern upstream's.

// fromCatalog asks the request's entry whether the catalog answers it;
// r.mu is held.
func (c *Client) fromCatalog(q *request, m *method) bool {
	r := c.r
	if m.catalog == nil || !r.cat.answers || r.link.state == ready || r.link.failure != nil || r.opts.Mode != Shared {
		return false
	}
	// A 2025 catalog answers a 2026-07-28 client too: its lists are the
	// upstream's whoever asks (bridge.go).
	modern := r.cat.seeded || r.era.kind == eraModern && r.era.discover != nil
	return m.catalog(c, q, modern)
}

// discoverFromCatalog answers a modern client's server/discover from a
// modern catalog while its DiscoverResult is fresh.
func (c *Client) discoverFromCatalog(q *request, modern bool) bool {
	if !modern || !q.modern || !time.Now().Before(c.r.cat.discUntil) {
		return false
	}
	c.answer(q.msg.ID, c.r.era.discover)
	return true
}

// listenFromCatalog opens a modern client's subscriptions/listen for list
// changes from a modern catalog (hearth feeds it from its own listens once
// an upstream runs); a resource's updates need the upstream running.
func (c *Client) listenFromCatalog(q *request, modern bool) bool {
	if !modern || !q.modern || q.wantsResources() {
		return false
	}
	c.listen(q)
	return true
}

// levelFromCatalog answers a legacy client's logging/setLevel while no
// upstream runs: its level is kept (setLevel) and set on the upstream when
// one starts, or, on a modern one, sent in its _meta from now on.
func (c *Client) levelFromCatalog(q *request, modern bool) bool {
	if q.modern || c.session.level < 0 || c.r.link.state != down {
		return false
	}
	if modern {
		c.session.meta = nil
	}
	c.answer(q.msg.ID, json.RawMessage(`{}`))
	return true
}

// listFromCatalog answers a list request from the catalog's pages; from a
// modern catalog only while the list is fresh, and to a client whose
// capabilities are those the lists were fetched with (a modern upstream may
// list other things for other capabilities).
func (c *Client) listFromCatalog(q *request, modern bool) bool {
	r := c.r
	if modern {
		until, ok := r.cat.until[q.msg.Method]
		if !ok || !time.Now().Before(until) {
			return false
		}
		caps := q.metaObject(metaCapabilities)
		if !q.modern {
			caps = c.session.capabilities()
		}
		if canonical(caps) != r.cat.caps {
			return false
		}
	}
	return c.fromPages(q)
}
