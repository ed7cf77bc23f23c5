package route

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// What a modern (2026-07-28) upstream needs of the router beyond ids and
// progress tokens (decision 0038): the state a legacy client set up in its
// session (log level, resource subscriptions) is kept by hearth and sent in
// each request's _meta or in hearth's own subscriptions/listen requests;
// the list changes it announces reach legacy clients as ever and modern
// clients on their own listens.

// legacyOnModern answers here what a legacy client asks of a modern
// upstream that has no such method: it reports whether it did; r.mu is
// held.
func (c *Client) legacyOnModern(msg *jsonrpc.Message, params json.RawMessage) bool {
	r := c.r
	switch msg.Method {
	case "logging/setLevel":
		// Its level goes in the _meta of each of its requests.
		p, _ := decodeObject(msg.Params)
		lvl := levelOf(p.str("level"))
		if lvl < 0 {
			c.fail(msg.ID, jsonrpc.CodeInvalidParams, "Invalid params: unknown log level "+string(p["level"]))
			return true
		}
		c.level, c.metaMembers = lvl, nil
		c.answer(msg.ID, json.RawMessage(`{}`))
		return true
	case "resources/subscribe", "resources/unsubscribe":
		p, _ := decodeObject(params)
		uri := p.str("uri")
		if uri == "" {
			c.fail(msg.ID, jsonrpc.CodeInvalidParams, "Invalid params: "+msg.Method+" needs a uri")
			return true
		}
		if msg.Method == "resources/subscribe" {
			if r.subs[uri] == nil {
				r.subs[uri] = map[*Client]struct{}{}
			}
			r.subs[uri][c] = struct{}{}
			c.subs[uri] = true
		} else {
			delete(c.subs, uri)
			if subs := r.subs[uri]; subs != nil {
				delete(subs, c)
				if len(subs) == 0 {
					delete(r.subs, uri)
				}
			}
		}
		r.syncURIListens()
		c.answer(msg.ID, json.RawMessage(`{}`))
		return true
	}
	return false
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
func (c *Client) listen(msg *jsonrpc.Message) {
	r := c.r
	p, _ := decodeObject(msg.Params)
	var f struct {
		Tools     bool     `json:"toolsListChanged"`
		Prompts   bool     `json:"promptsListChanged"`
		Resources bool     `json:"resourcesListChanged"`
		URIs      []string `json:"resourceSubscriptions"`
	}
	if raw, ok := p["notifications"]; !ok || json.Unmarshal(raw, &f) != nil {
		c.fail(msg.ID, jsonrpc.CodeInvalidParams, "Invalid params: subscriptions/listen needs a notifications object")
		return
	}
	l := &clientListen{id: msg.ID.Raw(), uris: map[string]bool{},
		tools: f.Tools && r.upCaps.toolsChanged, prompts: f.Prompts && r.upCaps.promptsChanged,
		resLists: f.Resources && r.upCaps.resourcesChanged}
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
	if r.upCaps.resourcesSubscribe && len(f.URIs) > 0 {
		for _, u := range f.URIs {
			l.uris[u] = true
		}
		honored["resourceSubscriptions"] = mustJSON(f.URIs)
	}
	c.listens[envelope.Key(l.id)] = l
	c.pushFor(jsonrpc.RawNotificationFrame("notifications/subscriptions/acknowledged", mustJSON(map[string]any{
		"_meta": map[string]json.RawMessage{metaSubscription: l.id}, "notifications": honored})), envelope.Key(l.id))
	r.syncURIListens()
}

// openListens opens hearth's listens on a modern upstream that just became
// ready: one for the list changes it declares, one per resource URI a
// client subscribed to; r.mu is held.
func (r *Router) openListens() {
	r.listListen = ""
	clear(r.uriListens)
	n := object{}
	if r.upCaps.toolsChanged {
		n["toolsListChanged"] = json.RawMessage(`true`)
	}
	if r.upCaps.promptsChanged {
		n["promptsListChanged"] = json.RawMessage(`true`)
	}
	if r.upCaps.resourcesChanged {
		n["resourcesListChanged"] = json.RawMessage(`true`)
	}
	if len(n) > 0 {
		r.listListen = r.openListen(n)
	}
	r.syncURIListens()
}

// syncURIListens opens a listen for each resource URI some client wants
// updates of and none is open for, and cancels those nobody wants any
// more. One listen per URI: some servers keep a single list-change
// subscription per connection, so a second listen for lists would displace
// the first; r.mu is held.
func (r *Router) syncURIListens() {
	if r.era != eraModern || r.state != ready || r.up == nil {
		return
	}
	want := map[string]bool{}
	for uri := range r.subs {
		want[uri] = true
	}
	for c := range r.clients {
		for _, l := range c.listens {
			for uri := range l.uris {
				want[uri] = true
			}
		}
	}
	uris := make([]string, 0, len(want))
	for uri := range want {
		if _, open := r.uriListens[uri]; !open {
			uris = append(uris, uri)
		}
	}
	sort.Strings(uris)
	for _, uri := range uris {
		r.uriListens[uri] = r.openListen(object{"resourceSubscriptions": mustJSON([]string{uri})})
	}
	for uri, key := range r.uriListens {
		if !want[uri] {
			delete(r.uriListens, uri)
			delete(r.pending, key)
			r.sendUp(jsonrpc.RawNotificationFrame("notifications/cancelled", mustJSON(map[string]any{
				"requestId": json.RawMessage(key), "reason": "no client listens any more"})))
		}
	}
}

// cancelListens ends every listen of hearth's own on a modern upstream
// (notifications/cancelled; a cancelled listen gets no answer); r.mu is
// held.
func (r *Router) cancelListens(reason string) {
	keys := make([]string, 0, 1+len(r.uriListens))
	if r.listListen != "" {
		keys = append(keys, r.listListen)
	}
	for _, k := range r.uriListens {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	r.listListen = ""
	clear(r.uriListens)
	for _, k := range keys {
		delete(r.pending, k)
		r.sendUp(jsonrpc.RawNotificationFrame("notifications/cancelled", mustJSON(map[string]any{
			"requestId": json.RawMessage(k), "reason": reason})))
	}
}

// openListen sends a subscriptions/listen of hearth's own and returns its
// upstream id key; r.mu is held.
func (r *Router) openListen(notifications object) string {
	r.nextID++
	id := strconv.AppendInt(nil, r.nextID, 10)
	key := envelope.Key(id)
	r.pending[key] = &pend{method: "subscriptions/listen", internal: func(json.RawMessage, json.RawMessage) {
		// The upstream ended it (or refused it): nothing more comes on it.
		if r.listListen == key {
			r.listListen = ""
		}
		for uri, k := range r.uriListens {
			if k == key {
				delete(r.uriListens, uri)
			}
		}
	}}
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
	for c := range r.clients {
		if !c.modern {
			c.push(legacy)
			continue
		}
		for _, l := range c.listens {
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
	for c := range r.subs[uri] {
		c.push(jsonrpc.RawNotificationFrame(msg.Method, params))
	}
	for c := range r.clients {
		for _, l := range c.listens {
			if l.uris[uri] {
				c.pushFor(jsonrpc.RawNotificationFrame(msg.Method, withMeta(params, object{metaSubscription: l.id})), envelope.Key(l.id))
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
