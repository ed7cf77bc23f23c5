package route

import (
	"encoding/json"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// Handle routes one frame the client sent (one line, without its newline).
// A frame that is not JSON-RPC is answered with its error.
func (c *Client) Handle(line []byte) {
	c.HandleParsed(jsonrpc.Parse(line))
}

// HandleParsed routes a frame the caller has decoded already (a session
// decodes each frame once, docs/decisions/0011): msg, or perr when it is
// not JSON-RPC (answered with its error).
func (c *Client) HandleParsed(msg *jsonrpc.Message, perr *jsonrpc.ParseError) {
	r := c.r
	r.mu.Lock()
	defer r.unlock()
	if c.gone {
		return
	}
	if perr != nil {
		c.push(jsonrpc.ErrorFrame(perr.ID, perr.Err))
		return
	}
	switch msg.Kind {
	case jsonrpc.Request:
		c.request(readRequest(msg))
	case jsonrpc.Notification:
		c.notification(msg)
	case jsonrpc.Response:
		c.response(msg)
	}
}

// request routes a client request through the stages every request goes
// through, asking at each the method's entry in the table (methods.go):
// answered by the router whatever the upstream; refused on a legacy
// upstream; a shared router's rewriting or answer; the catalog's answer
// while no upstream is ready; the instance's failure; queued until the
// upstream is ready; forwarded. r.mu is held.
func (c *Client) request(q *request) {
	r := c.r
	msg := q.msg
	c.hear(q)
	r.expireSeed()
	k := msg.ID.Key()
	_, listening := c.subs.listens[k]
	if _, dup := c.inflight[k]; dup || listening {
		c.fail(msg.ID, jsonrpc.CodeDuplicateID, "Invalid Request: id "+string(msg.ID.Raw())+" is that of a request still in flight")
		return
	}
	if q.modern && r.era.kind != eraModern && removedMethods[msg.Method] {
		c.fail(msg.ID, jsonrpc.CodeMethodNotFound, "Method not found: "+msg.Method+" is not in 2026-07-28 (see its changelog)")
		return
	}
	m := methodOf(msg.Method)
	if m.local != nil {
		m.local(c, q)
		return
	}
	if q.modern && c.declareModern(q) {
		defer c.releaseHeld()
	}
	if q.modern && r.era.kind != eraModern {
		c.modernLevel(q)
	}
	if m.legacy != nil && r.era.kind == eraLegacy {
		m.legacy(c, q)
		return
	}
	if r.era.initParams == nil {
		c.fail(msg.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: send initialize first")
		return
	}
	if r.opts.Mode == Shared && m.shared != nil && m.shared(c, q) {
		return
	}
	if c.fromCatalog(q, m) {
		return
	}
	if r.link.failure != nil {
		c.fail(msg.ID, CodeUpstream, r.link.failure.Error())
		return
	}
	if r.link.state != ready {
		r.queue(queuedReq{c, q, m})
		return
	}
	r.forward(c, q, m)
}

// declareModern takes what a 2026-07-28 request says of its client: until
// an initialize says otherwise, it is a modern client of what its _meta
// declares, and the first such request gives a legacy upstream its
// initialize params. It reports whether the client is initialized now
// (what the upstream asked of it before reaches it); r.mu is held.
func (c *Client) declareModern(q *request) (initializedNow bool) {
	r := c.r
	if !c.session.inited {
		c.session.modern = true
		c.session.caps = capsOfMeta(q)
		if q.msg.Method != "server/discover" && !c.session.initialized {
			// It speaks 2026-07-28 throughout: no initialize comes.
			c.session.initialized = true
			initializedNow = true
		}
	}
	if r.era.initParams == nil {
		r.era.initParams = upstreamInitParams(initParamsFromMeta(q), r.opts.Mode)
	}
	return initializedNow
}

// forward sends a client's request to the upstream under an id of hearth's,
// with its progress token replaced by one of hearth's; r.mu is held.
func (r *Router) forward(c *Client, q *request, m *method) {
	translated := false
	switch r.era.kind {
	case eraLegacy:
		if m.legacy != nil {
			m.legacy(c, q) // it waited for the era to be known
			return
		}
		if q.modern && isInputMethod(q.msg.Method) && (q.param("requestState") != nil || q.param("inputResponses") != nil) {
			r.resume(c, q) // the retry of a parked call (bridge.go)
			return
		}
	case eraModern:
		if q.modern {
			if m.fromModern != nil {
				m.fromModern(c, q)
				return
			}
			break // a modern client's own request: its _meta goes untouched
		}
		if m.onModern != nil && m.onModern(c, q) {
			return
		}
		c.withModernMeta(q)
		translated = true
	}
	msg := q.msg
	p := &pend{c: c, id: msg.ID.Raw(), clientK: msg.ID.Key(), method: msg.Method}
	p.input.translated = translated
	if q.token != nil {
		q.setMetaMember("progressToken", quote(r.flight.giveToken(p, q.token)))
	}
	params := q.params()
	if m.forwarded != nil {
		m.forwarded(c, p, q, params)
	}
	id, upKey := r.flight.add(p)
	c.inflight[p.clientK] = upKey
	r.sendUp(jsonrpc.RequestFrame(jsonrpc.RawID(id), msg.Method, params))
}

// upstreamInitParams are what an upstream is initialized with: the first
// client's initialize params. A shared instance's clients are all of one
// shape (Shape: what else the params hold is only _meta, about that one
// request), so the upstream is told what each of them declares, and
// offers each what it would offer it spawned directly
// (docs/decisions/0056-client-shape.md); their _meta is left out. A single
// client's pass unchanged.
func upstreamInitParams(params json.RawMessage, mode Mode) json.RawMessage {
	if params == nil {
		params = json.RawMessage(`{}`)
	}
	if mode == Single {
		return params
	}
	p, ok := decodeObject(params)
	if !ok {
		return params
	}
	if _, has := p["_meta"]; !has {
		return params
	}
	delete(p, "_meta")
	return p.encode()
}

// notification routes a client notification: the table's entry for its
// method (methods.go) takes it, or it goes to a ready upstream as it is;
// r.mu is held.
func (c *Client) notification(msg *jsonrpc.Message) {
	if take := clientNotes[msg.Method]; take != nil && take(c, msg) {
		return
	}
	if c.r.link.state == ready {
		c.r.sendUp(jsonrpc.RawNotificationFrame(msg.Method, msg.Params))
	}
}

// initializedNote: the upstream had its own notifications/initialized from
// hearth; a single client's initialize was the upstream's. What the
// upstream asked of the client before it was initialized reaches it now.
func (c *Client) initializedNote(*jsonrpc.Message) bool {
	if !c.session.initialized {
		c.session.initialized = true
		c.releaseHeld()
	}
	return true
}

// cancelled takes a client's notifications/cancelled: a request still
// queued is dropped (it never reaches the upstream, and a cancelled request
// gets no answer), a listen of its own ended, and one in flight cancelled
// upstream under hearth's id; r.mu is held.
func (c *Client) cancelled(msg *jsonrpc.Message) bool {
	r := c.r
	doc := msg.ParamsDoc()
	if doc == nil || doc.Root().Kind() != jsonval.Object {
		return true
	}
	k := envelope.Key(rawMember(doc, doc.Root(), "requestId"))
	if r.link.unqueue(c, k) {
		return true
	}
	if _, ok := c.subs.listens[k]; ok {
		delete(c.subs.listens, k) // a listen ends without an answer
		r.syncURIListens()
		return true
	}
	upKey, ok := c.inflight[k]
	if !ok {
		return true // not one of its requests in flight: nothing to cancel
	}
	// The request is the client's no more: a cancelled request gets no
	// answer (the upstream's, should it send one, is dropped), and its id
	// is free again.
	delete(c.inflight, k)
	if p := r.flight.get(upKey); p != nil {
		p.c = nil
		r.flight.dropToken(p)
		if p.input.round != nil {
			r.dropRound(upKey, p) // answered already: nothing to cancel upstream
			return true
		}
	}
	r.sendUp(jsonrpc.RawNotificationFrame(msg.Method, writeObject(doc, doc.Root(), []member{{"requestId", json.RawMessage(upKey)}}, nil)))
	return true
}

// rootsChanged: a shared upstream holds one client's roots, so only that
// client's change is the upstream's to hear (it asks that client again,
// rootsTarget); a modern one asks for roots in each request.
func (c *Client) rootsChanged(*jsonrpc.Message) bool {
	r := c.r
	return r.era.kind == eraModern || r.opts.Mode == Shared && c != r.clients.rootsFrom
}
