package mcp

import (
	"context"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// subscription is one open subscriptions/listen stream of a modern
// connection: the notifications it agreed to send, tagged with the listen
// request's id.
type subscription struct {
	id        jsonrpc.ID
	tools     bool
	resources bool
}

// listen serves subscriptions/listen: it acknowledges the filter it honors
// (tool and resource list changes; prompts and per-resource updates are not
// served and are left out of the acknowledgement) and keeps the request open
// until the client cancels it, the connection ends, or the daemon drains
// (then it is answered: a graceful end).
func (s *registry) listen(msg *jsonrpc.Message, meta *reqMeta) {
	if s.out.silenced.Load() {
		return
	}
	if s.life.draining.Load() {
		s.out.write(s.shuttingDown(msg.ID), msg.ID.Key())
		s.out.flush()
		return
	}
	d := msg.ParamsDoc()
	filter := d.Get(d.Root(), "notifications") // readMeta checked that params is an object
	bad := func(what string) {
		s.answer(jsonrpc.ErrorFrame(msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + what}), msg.ID.Key())
	}
	if filter == nil || filter.Kind() != jsonval.Object {
		bad(`"notifications" is required: an object such as {"toolsListChanged": true, "resourcesListChanged": true}`)
		return
	}
	want := map[string]bool{}
	for _, k := range []string{"toolsListChanged", "resourcesListChanged", "promptsListChanged"} {
		n := d.Get(filter, k)
		if n == nil {
			continue
		}
		if n.Kind() != jsonval.True && n.Kind() != jsonval.False {
			bad(`"notifications".` + k + ` must be a boolean`)
			return
		}
		want[k] = n.Kind() == jsonval.True
	}
	if n := d.Get(filter, "resourceSubscriptions"); n != nil {
		ok := n.Kind() == jsonval.Array
		for it := d.Kids(n); ok; {
			u := it.Next()
			if u == nil {
				break
			}
			ok = u.Kind() == jsonval.String
		}
		if !ok {
			bad(`"notifications".resourceSubscriptions must be an array of URIs`)
			return
		}
	}
	sub := &subscription{id: msg.ID, tools: want["toolsListChanged"]}
	sub.resources = want["resourcesListChanged"] && len(s.srv.opts.Registry.ResourceProviders()) > 0
	e := &entry{id: msg.ID, key: msg.ID.Key(), method: msg.Method, meta: meta}
	e.ctx, e.cancel = context.WithCancel(s.life.base)
	p := &s.pend
	p.mu.Lock()
	if _, dup := p.inflight[e.key]; dup {
		p.mu.Unlock()
		e.cancel()
		s.answer(duplicateID(msg.ID), e.key)
		return
	}
	p.inflight[e.key] = e
	p.subs[e.key] = sub
	honored := map[string]any{}
	if sub.tools {
		honored["toolsListChanged"] = true
	}
	if sub.resources {
		honored["resourcesListChanged"] = true
	}
	// Written under the lock of the subscriptions: no list-changed
	// notification of this subscription can precede its acknowledgement.
	s.notifyClient("notifications/subscriptions/acknowledged", map[string]any{
		"_meta":         map[string]any{metaSubscriptionID: rawID(msg.ID)},
		"notifications": honored,
	}, e.key)
	p.mu.Unlock()
}

// rawID marshals as the id exactly as the client wrote it.
type rawID jsonrpc.ID

func (r rawID) MarshalJSON() ([]byte, error) { return jsonrpc.ID(r).Raw(), nil }

// unlisten ends a subscription the client cancelled: notifications/cancelled
// wants no reply; $/cancelRequest gets the graceful end.
func (s *registry) unlisten(e *entry, reply bool) {
	open := s.pend.remove(e)
	e.cancel()
	if open && reply {
		s.out.write(s.listenEnded(e.id), e.key)
		s.out.flush()
	}
}

// listenEnded is the result that ends a subscription gracefully.
func (s *registry) listenEnded(id jsonrpc.ID) []byte {
	b := make([]byte, 0, 192)
	b = append(b, `{"resultType":"complete","_meta":{"`+metaSubscriptionID+`":`...)
	b = append(b, id.Raw()...)
	b = append(b, `,"`+metaServerInfo+`":`...)
	b = append(b, s.srv.serverInfoJSON()...)
	b = append(b, "}}"...)
	return jsonrpc.ResultFrame(id, b)
}

// endSubscriptions answers every open subscription (the daemon drains), so
// clients know they ended on purpose.
func (s *registry) endSubscriptions() {
	p := &s.pend
	p.mu.Lock()
	var ended []jsonrpc.ID
	for key, sub := range p.subs {
		ended = append(ended, sub.id)
		delete(p.subs, key)
		if e := p.inflight[key]; e != nil && e.method == "subscriptions/listen" {
			delete(p.inflight, key)
			e.cancel()
		}
	}
	p.mu.Unlock()
	for _, id := range ended {
		s.out.write(s.listenEnded(id), id.Key())
	}
	if len(ended) > 0 {
		s.out.flush()
	}
}

// listChanged tells this connection's client that the tool or resource list
// changed: a modern connection on each subscription that asked (tagged with
// its id), a legacy session unasked (its initialize result advertises
// listChanged). A plain connection hears nothing.
func (s *registry) listChanged(tools, resources bool) {
	if s.out.silenced.Load() {
		return
	}
	if s.nego.modern.Load() {
		p := &s.pend
		p.mu.Lock()
		defer p.mu.Unlock()
		for key, sub := range p.subs {
			tag := map[string]any{"_meta": map[string]any{metaSubscriptionID: rawID(sub.id)}}
			if tools && sub.tools {
				s.notifyClient("notifications/tools/list_changed", tag, key)
			}
			if resources && sub.resources {
				s.notifyClient("notifications/resources/list_changed", tag, key)
			}
		}
		return
	}
	if !s.nego.initialized.Load() {
		return
	}
	if tools {
		s.out.write([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`), "")
	}
	if resources && len(s.srv.opts.Registry.ResourceProviders()) > 0 {
		s.out.write([]byte(`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`), "")
	}
	s.out.flush()
}

// ListChanged notifies every connected client that the tool list, the
// resource list (or a resource's content), or both changed: modern
// subscribers that asked for it and legacy sessions alike (docs/protocol.md).
// The daemon calls it after a reload that changed what it serves.
func (s *Server) ListChanged(tools, resources bool) {
	if !tools && !resources {
		return
	}
	s.liveMu.Lock()
	sessions := make([]*session, 0, len(s.live))
	for sess := range s.live {
		sessions = append(sessions, sess)
	}
	s.liveMu.Unlock()
	for _, sess := range sessions {
		if sess.reg != nil {
			sess.reg.listChanged(tools, resources)
		}
	}
}
