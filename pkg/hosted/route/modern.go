package route

import (
	"encoding/json"
	"sort"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// What a modern (2026-07-28) upstream needs of the router beyond ids and
// progress tokens (decision 0038): the state a legacy client set up in its
// session (log level, resource subscriptions) is kept by hearth and sent in
// each request's _meta or in hearth's own subscriptions/listen requests;
// the list changes it announces reach legacy clients as ever and modern
// clients on their own listens.

// hearthListens are hearth's own subscriptions/listen requests to a modern
// upstream: one for list changes, one per resource URI a client subscribed
// to, by upstream id key ("" and absent: none open).
type hearthListens struct {
	lists string
	uris  map[string]string
}

func newHearthListens() hearthListens { return hearthListens{uris: map[string]string{}} }

// forget forgets every listen (the upstream is gone, or they were
// cancelled).
func (l *hearthListens) forget() {
	l.lists = ""
	clear(l.uris)
}

// ended: the upstream ended the listen under key (or refused it).
func (l *hearthListens) ended(key string) {
	if l.lists == key {
		l.lists = ""
	}
	for uri, k := range l.uris {
		if k == key {
			delete(l.uris, uri)
		}
	}
}

// keys lists the listens open, sorted.
func (l *hearthListens) keys() []string {
	keys := make([]string, 0, 1+len(l.uris))
	if l.lists != "" {
		keys = append(keys, l.lists)
	}
	for _, k := range l.uris {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// levelOnModern answers a legacy client's logging/setLevel to a modern
// upstream, which has no such method: its level goes in the _meta of each
// of its requests (the request's method table entry, methods.go); r.mu is
// held.
func (c *Client) levelOnModern(q *request) bool {
	lvl := levelOf(q.str("level"))
	if lvl < 0 {
		c.fail(q.msg.ID, jsonrpc.CodeInvalidParams, "Invalid params: unknown log level "+string(q.param("level")))
		return true
	}
	c.session.level, c.session.meta = lvl, nil
	c.answer(q.msg.ID, json.RawMessage(`{}`))
	return true
}

// subscriptionOnModern answers a legacy client's resources/subscribe or
// unsubscribe to a modern upstream, which has no such methods: hearth
// keeps its subscriptions and listens for them itself (syncURIListens);
// r.mu is held.
func (c *Client) subscriptionOnModern(q *request) bool {
	r := c.r
	uri := q.str("uri")
	if uri == "" {
		c.fail(q.msg.ID, jsonrpc.CodeInvalidParams, "Invalid params: "+q.msg.Method+" needs a uri")
		return true
	}
	if q.msg.Method == "resources/subscribe" {
		r.subs.add(c, uri)
	} else {
		r.subs.remove(c, uri)
	}
	r.syncURIListens()
	c.answer(q.msg.ID, json.RawMessage(`{}`))
	return true
}

// clientListen is a modern client's open subscriptions/listen, served by
// hearth from its own listens on the upstream.
type clientListen struct {
	id                       json.RawMessage
	tools, prompts, resLists bool
	uris                     map[string]bool
}

// listen opens a modern client's subscriptions/listen: acknowledged at
// once with what the upstream can announce, then fed by hearth; r.mu is
// held.
func (c *Client) listen(q *request) {
	r := c.r
	var f struct {
		Tools     bool     `json:"toolsListChanged"`
		Prompts   bool     `json:"promptsListChanged"`
		Resources bool     `json:"resourcesListChanged"`
		URIs      []string `json:"resourceSubscriptions"`
	}
	if raw := q.param("notifications"); raw == nil || json.Unmarshal(raw, &f) != nil {
		c.fail(q.msg.ID, jsonrpc.CodeInvalidParams, "Invalid params: subscriptions/listen needs a notifications object")
		return
	}
	caps := r.era.caps
	l := &clientListen{id: q.msg.ID.Raw(), uris: map[string]bool{},
		tools: f.Tools && caps.toolsChanged, prompts: f.Prompts && caps.promptsChanged,
		resLists: f.Resources && caps.resourcesChanged}
	honored := object{}
	if l.tools {
		honored["toolsListChanged"] = json.RawMessage(`true`)
	}
	if l.prompts {
		honored["promptsListChanged"] = json.RawMessage(`true`)
	}
	if l.resLists {
		honored["resourcesListChanged"] = json.RawMessage(`true`)
	}
	if caps.resourcesSubscribe && len(f.URIs) > 0 {
		for _, u := range f.URIs {
			l.uris[u] = true
		}
		honored["resourceSubscriptions"] = mustJSON(f.URIs)
	}
	c.subs.listens[envelope.Key(l.id)] = l
	c.pushFor(jsonrpc.RawNotificationFrame("notifications/subscriptions/acknowledged", mustJSON(map[string]any{
		"_meta": map[string]json.RawMessage{metaSubscription: l.id}, "notifications": honored})), envelope.Key(l.id))
	r.syncURIListens()
}

// openListens opens hearth's listens on a modern upstream that just became
// ready: one for the list changes it declares, one per resource URI a
// client subscribed to; r.mu is held.
func (r *Router) openListens() {
	r.era.listens.forget()
	n := object{}
	if r.era.caps.toolsChanged {
		n["toolsListChanged"] = json.RawMessage(`true`)
	}
	if r.era.caps.promptsChanged {
		n["promptsListChanged"] = json.RawMessage(`true`)
	}
	if r.era.caps.resourcesChanged {
		n["resourcesListChanged"] = json.RawMessage(`true`)
	}
	if len(n) > 0 {
		r.era.listens.lists = r.openListen(n)
	}
	r.syncURIListens()
}

// syncURIListens opens a listen for each resource URI some client wants
// updates of and none is open for, and cancels those nobody wants any
// more. One listen per URI: some servers keep a single list-change
// subscription per connection, so a second listen for lists would displace
// the first; r.mu is held.
func (r *Router) syncURIListens() {
	if r.era.kind == eraLegacy {
		r.syncBridgeSubs()
		return
	}
	if r.era.kind != eraModern || r.link.state != ready || r.link.out == nil {
		return
	}
	want := map[string]bool{}
	for uri := range r.subs.byURI {
		want[uri] = true
	}
	for c := range r.clients.set {
		for _, l := range c.subs.listens {
			for uri := range l.uris {
				want[uri] = true
			}
		}
	}
	uris := make([]string, 0, len(want))
	for uri := range want {
		if _, open := r.era.listens.uris[uri]; !open {
			uris = append(uris, uri)
		}
	}
	sort.Strings(uris)
	for _, uri := range uris {
		r.era.listens.uris[uri] = r.openListen(object{"resourceSubscriptions": mustJSON([]string{uri})})
	}
	for uri, key := range r.era.listens.uris {
		if !want[uri] {
			delete(r.era.listens.uris, uri)
			r.flight.remove(key)
			r.sendUp(jsonrpc.RawNotificationFrame("notifications/cancelled", mustJSON(map[string]any{
				"requestId": json.RawMessage(key), "reason": "no client listens any more"})))
		}
	}
}

// cancelListens ends every listen of hearth's own on a modern upstream
// (notifications/cancelled; a cancelled listen gets no answer); r.mu is
// held.
func (r *Router) cancelListens(reason string) {
	keys := r.era.listens.keys()
	r.era.listens.forget()
	for _, k := range keys {
		r.flight.remove(k)
		r.sendUp(jsonrpc.RawNotificationFrame("notifications/cancelled", mustJSON(map[string]any{
			"requestId": json.RawMessage(k), "reason": reason})))
	}
}

// openListen sends a subscriptions/listen of hearth's own and returns its
// upstream id key; r.mu is held.
func (r *Router) openListen(notifications object) string {
	var id []byte
	var key string // the answer's, below: it is set before any answer comes
	id, key = r.flight.own("subscriptions/listen", func(json.RawMessage, json.RawMessage) {
		r.era.listens.ended(key) // the upstream ended it (or refused it): nothing more comes on it
	})
	meta := object{metaVersion: quote(modernVersion), metaCapabilities: json.RawMessage(`{}`),
		metaClientInfo: mustJSON(map[string]string{"name": "hearth", "version": "hosted"})}
	r.sendUp(jsonrpc.RequestFrame(jsonrpc.RawID(id), "subscriptions/listen", mustJSON(map[string]any{"_meta": meta, "notifications": notifications})))
	return key
}

// listChanged delivers a modern upstream's list change: to every legacy
// client as the 2025 notification, and to each modern client's listens that
// asked for it, under that listen's id; r.mu is held.
func (r *Router) listChanged(msg *jsonrpc.Message) {
	params := withoutSubscription(msg.Params)
	legacy := jsonrpc.RawNotificationFrame(msg.Method, params)
	for c := range r.clients.set {
		if !c.session.modern {
			c.push(legacy)
			continue
		}
		for _, l := range c.subs.listens {
			if (msg.Method == "notifications/tools/list_changed" && l.tools) ||
				(msg.Method == "notifications/prompts/list_changed" && l.prompts) ||
				(msg.Method == "notifications/resources/list_changed" && l.resLists) {
				c.pushFor(jsonrpc.RawNotificationFrame(msg.Method, withMeta(params, object{metaSubscription: l.id})), envelope.Key(l.id))
			}
		}
	}
}

// resourceUpdated delivers a modern upstream's resource update to the
// legacy clients that subscribed to the URI and the modern listens that
// name it; r.mu is held.
func (r *Router) resourceUpdated(msg *jsonrpc.Message) {
	params := withoutSubscription(msg.Params)
	p, _ := decodeObject(params)
	uri := p.str("uri")
	for c := range r.subs.byURI[uri] {
		c.push(jsonrpc.RawNotificationFrame(msg.Method, params))
	}
	r.resourceUpdatedOnListens(params)
}

// resourceUpdatedOnListens delivers a resource update to the modern
// clients' listens that name its URI; r.mu is held.
func (r *Router) resourceUpdatedOnListens(params json.RawMessage) {
	p, _ := decodeObject(params)
	uri := p.str("uri")
	for c := range r.clients.set {
		for _, l := range c.subs.listens {
			if l.uris[uri] {
				c.pushFor(jsonrpc.RawNotificationFrame("notifications/resources/updated", withMeta(params, object{metaSubscription: l.id})), envelope.Key(l.id))
			}
		}
	}
}

// withoutSubscription takes hearth's own listen id out of a notification's
// _meta (it means nothing to a client).
func withoutSubscription(params json.RawMessage) json.RawMessage {
	p, meta, ok := metaOf(params)
	if !ok {
		return params
	}
	delete(meta, metaSubscription)
	if len(meta) == 0 {
		delete(p, "_meta")
	} else {
		p["_meta"] = meta.encode()
	}
	return p.encode()
}
