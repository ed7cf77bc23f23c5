package route

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

var errOverflow = errors.New("the client stopped reading: too much output queued for it")

// Client is one client connection attached to a router.
type Client struct {
	r   *Router
	out *outbox
	// Under r.mu.
	gone     bool
	inited   bool
	caps     clientCaps
	level    int               // the log level it asked for (-1: none)
	inflight map[string]string // its request id key -> upstream id key
	subs     map[string]bool   // resource URIs it subscribed to
	tag      string            // who it is across daemons ("": nobody known; resume.go)
	seq      uint64            // its place in the order clients attached
	settled  func()            // WhenSettled's, until called
	// initialized: it sent notifications/initialized (or speaks
	// 2026-07-28 throughout): the upstream's requests may reach it.
	initialized bool
	// initParams are its initialize's params (its capabilities and
	// clientInfo, sent in _meta on its behalf to a modern upstream).
	initParams json.RawMessage
	// metaMembers caches the members of its modern _meta (without braces),
	// made from initParams and level; nil: to be made again.
	metaMembers []byte
	// modern: it sent a request with 2026-07-28 _meta and no initialize;
	// it hears of list changes only through its own listens (by id key).
	modern  bool
	listens map[string]*clientListen
	// said is the params of its latest initialize, or of a server/discover
	// with modern _meta (saidModern): who it says it is (identity.go).
	said       json.RawMessage
	saidModern bool
}

type clientCaps struct{ sampling, elicitation, roots bool }

// Attach adds a client, whose frames go to peer. gone is called once if the
// client is given up (its writes fail, or it stopped reading).
func (r *Router) Attach(peer Peer, gone func(error)) *Client {
	c := &Client{r: r, level: -1, inflight: map[string]string{}, subs: map[string]bool{}, listens: map[string]*clientListen{}}
	c.out = newOutbox(r.opts.ClientLimit, peer, func(err error) {
		c.Detach()
		if gone != nil {
			gone(err)
		}
	})
	r.mu.Lock()
	r.attached++
	c.seq = r.attached
	r.clients[c] = struct{}{}
	r.unlock()
	return c
}

// Pending is how many of the client's requests are unanswered: in flight
// upstream, queued, or its initialize waiting.
func (c *Client) Pending() int {
	r := c.r
	r.mu.Lock()
	defer r.unlock()
	return c.pendingLocked()
}

// pendingLocked is Pending with r.mu held.
func (c *Client) pendingLocked() int {
	r := c.r
	n := len(c.inflight)
	for _, q := range r.queued {
		if q.c == c {
			n++
		}
	}
	for _, w := range r.initWait {
		if w.c == c {
			n++
		}
	}
	return n
}

// push queues a frame to the client that belongs to none of its requests
// in particular (replies are labelled by the id they carry); r.mu is held.
func (c *Client) push(frame []byte) { c.pushFor(frame, "") }

// pushFor queues a frame to the client that belongs to its request with
// key re (Peer); r.mu is held.
func (c *Client) pushFor(frame []byte, re string) {
	if !c.gone && c.out.push(frame, re) {
		c.r.claimed = append(c.r.claimed, c.out)
	}
}

// aRequest is the key (jsonrpc.Key, as Peer labels frames) of one of the
// client's requests in flight upstream, the one sent first; "" when none
// is. A frame the upstream sends about "the client's request" when the
// router cannot tell which (a server-to-client request, a log message)
// goes with it, so that a transport that answers each request apart
// delivers it where the client listens; r.mu is held.
func (c *Client) aRequest() string {
	var first *pend
	firstN := int64(-1)
	for _, upKey := range c.inflight {
		p := c.r.pending[upKey]
		if p == nil {
			continue
		}
		n, _ := strconv.ParseInt(upKey, 10, 64)
		if first == nil || n < firstN {
			first, firstN = p, n
		}
	}
	if first == nil {
		return ""
	}
	return envelope.Key(first.id)
}

// EndInput: the client's input ended (its stdin closed). Each of its
// requests still unanswered is answered now with an error that says reason,
// and those in flight are cancelled upstream (notifications/cancelled), as
// a server spawned directly would stop with its stdin; their late answers
// are dropped. The client stays attached, so the error replies are written
// (docs/protocol.md, "Hosted servers").
func (c *Client) EndInput(reason string) {
	r := c.r
	r.mu.Lock()
	defer r.unlock()
	if c.gone {
		return
	}
	msg := rpcError(jsonrpc.CodeCancelled, reason)
	for clientK, upKey := range c.inflight {
		delete(c.inflight, clientK)
		p := r.pending[upKey]
		if p == nil {
			continue
		}
		c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(p.id), nil, msg))
		r.abandon(upKey, p, reason)
	}
	i := 0
	for _, q := range r.queued {
		if q.c == c {
			c.push(jsonrpc.ResponseFrame(q.msg.ID, nil, msg))
			continue
		}
		r.queued[i] = q
		i++
	}
	clear(r.queued[i:])
	r.queued = r.queued[:i]
	i = 0
	for _, w := range r.initWait {
		if w.c == c {
			c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(w.id), nil, msg))
			continue
		}
		r.initWait[i] = w
		i++
	}
	clear(r.initWait[i:])
	r.initWait = r.initWait[:i]
}

// abandon gives up a request in flight upstream for its client: its answer
// and progress are dropped, and the upstream is told to cancel it (a round
// of an input-required exchange was answered already: nothing to cancel);
// r.mu is held.
func (r *Router) abandon(upKey string, p *pend, reason string) {
	p.c = nil
	p.internal = func(json.RawMessage, json.RawMessage) {}
	if p.token != "" {
		delete(r.progress, p.token)
	}
	if p.round != nil {
		r.dropRound(upKey, p)
		return
	}
	if r.up != nil {
		r.sendUp(jsonrpc.RawNotificationFrame("notifications/cancelled",
			mustJSON(map[string]any{"requestId": json.RawMessage(upKey), "reason": reason})))
	}
}

// Detach removes the client: its requests still in flight are cancelled
// upstream (their answers are dropped), its subscriptions released, and
// requests the upstream made of it answered with an error.
func (c *Client) Detach() { c.detach(false) }

// detach removes the client; park keeps its subscriptions and log level
// for its return (Park); r.mu is not held.
func (c *Client) detach(park bool) {
	r := c.r
	r.mu.Lock()
	defer r.unlock()
	if c.gone {
		return
	}
	park = park && c.tag != ""
	if c.settled != nil {
		c.settled = nil // it never settles now
		r.settling--
	}
	c.gone = true
	c.out.close()
	delete(r.clients, c)
	if r.rootsFrom == c {
		r.rootsFrom = nil
	}
	for _, upKey := range c.inflight {
		p := r.pending[upKey]
		if p == nil {
			continue
		}
		r.abandon(upKey, p, "the client went away")
	}
	if park {
		r.park(c)
	}
	for uri := range c.subs {
		r.unsubscribe(c, uri)
	}
	for k, s := range r.s2c {
		if s.c == c {
			delete(r.s2c, k)
			s.stop()
			if s.round != nil {
				continue // the round's request was the client's: it is cancelled above
			}
			delete(r.s2cUp, envelope.Key(s.upID))
			r.sendUp(jsonrpc.ResponseFrame(jsonrpc.RawID(s.upID), nil, rpcError(jsonrpc.CodeInternalError, "the client this request was sent to went away")))
		}
	}
	if len(c.listens) > 0 {
		clear(c.listens)
		r.syncURIListens()
	}
	i := 0
	for _, w := range r.initWait {
		if w.c != c {
			r.initWait[i] = w
			i++
		}
	}
	r.initWait = r.initWait[:i]
	r.relaxLevel()
}

// relaxLevel sets the upstream to a less verbose level when no client asks
// for its level any more; r.mu is held.
func (r *Router) relaxLevel() {
	if old := r.upLevel; old >= 0 && r.era != eraModern {
		if lvl := r.minLevel(); lvl > old && r.state == ready {
			r.upLevel = lvl
			r.internalRequest("logging/setLevel", mustJSON(map[string]string{"level": levelNames[lvl]}))
		}
	}
}

// sendUp sends a frame to the upstream if there is one; r.mu is held.
func (r *Router) sendUp(frame []byte) {
	if r.up != nil && r.up.push(frame, "") {
		r.claimed = append(r.claimed, r.up)
	}
}

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
		c.request(msg)
	case jsonrpc.Notification:
		c.notification(msg)
	case jsonrpc.Response:
		c.response(msg)
	}
}

func (c *Client) answer(id jsonrpc.ID, result json.RawMessage) {
	c.push(jsonrpc.ResponseFrame(id, result, nil))
}

func (c *Client) fail(id jsonrpc.ID, code int, message string) {
	c.push(jsonrpc.ResponseFrame(id, nil, rpcError(code, message)))
}

// request routes a client request; r.mu is held.
func (c *Client) request(msg *jsonrpc.Message) {
	r := c.r
	c.hear(msg)
	r.expireSeed()
	_, listening := c.listens[envelope.Key(msg.ID.Raw())]
	if _, dup := c.inflight[envelope.Key(msg.ID.Raw())]; dup || listening {
		c.fail(msg.ID, jsonrpc.CodeDuplicateID, "Invalid Request: id "+string(msg.ID.Raw())+" is that of a request still in flight")
		return
	}
	switch msg.Method {
	case "ping":
		c.answer(msg.ID, json.RawMessage(`{}`))
		return
	case "initialize":
		c.initialize(msg)
		return
	}
	if modernMeta(msg.Params) != nil {
		if !c.inited {
			// What it declares, until an initialize says otherwise.
			c.modern = true
			c.caps = parseClientCaps(initParamsFromMeta(msg.Params))
			if msg.Method != "server/discover" && !c.initialized {
				// It speaks 2026-07-28 throughout: no initialize comes.
				c.initialized = true
				defer c.releaseHeld()
			}
		}
		if r.initParams == nil {
			r.initParams = upstreamInitParams(initParamsFromMeta(msg.Params), r.opts.Mode)
		}
	}
	if msg.Method == "server/discover" && r.era == eraLegacy {
		c.refuseDiscover(msg)
		return
	}
	if r.initParams == nil {
		c.fail(msg.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: send initialize first")
		return
	}
	params := msg.Params
	if r.opts.Mode == Shared {
		switch msg.Method {
		case "resources/subscribe", "resources/unsubscribe":
			if c.subscription(msg) {
				return
			}
		case "logging/setLevel":
			if !c.setLevel(msg, &params) {
				return
			}
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
			if res, ok := r.cache[c.cacheKey(msg)]; ok && r.state == ready {
				c.answer(msg.ID, res)
				return
			}
		}
	}
	if c.fromCatalog(msg) {
		return
	}
	if r.failure != nil {
		c.fail(msg.ID, CodeUpstream, r.failure.Error())
		return
	}
	if r.state != ready {
		r.queued = append(r.queued, queuedReq{c: c, msg: msg, params: params})
		r.needUpstream()
		return
	}
	r.forward(c, msg, params)
}

// needUpstream gets an upstream going for a request that waits: a new
// process, or the initialize of one started before anybody asked; r.mu is
// held.
func (r *Router) needUpstream() {
	switch r.state {
	case down:
		r.opts.Wake()
	case starting:
		if r.initID == "" && r.up != nil {
			r.sendInitialize()
		}
	}
}

// refuseDiscover answers the probe of a client of a legacy upstream: an
// error that is not a modern one, so it falls back to initialize
// (basic/transports/stdio, "Backward Compatibility").
func (c *Client) refuseDiscover(msg *jsonrpc.Message) {
	c.fail(msg.ID, jsonrpc.CodeMethodNotFound, "Method not found: server/discover ("+c.r.opts.Name+" speaks the 2025 protocol; use initialize)")
}

// forward sends a client's request to the upstream under an id of hearth's,
// with its progress token replaced by one of hearth's; r.mu is held.
func (r *Router) forward(c *Client, msg *jsonrpc.Message, params json.RawMessage) {
	translated := false
	switch r.era {
	case eraLegacy:
		if msg.Method == "server/discover" {
			c.refuseDiscover(msg) // it waited for the era to be known
			return
		}
	case eraModern:
		if modernMeta(params) != nil {
			if msg.Method == "subscriptions/listen" {
				c.listen(msg)
				return
			}
			break // a modern client's own request: its _meta goes untouched
		}
		if c.legacyOnModern(msg, params) {
			return
		}
		params = c.withModernMeta(params)
		translated = true
	}
	r.nextID++
	id := strconv.AppendInt(nil, r.nextID, 10)
	upKey := envelope.Key(id)
	p := &pend{c: c, id: msg.ID.Raw(), clientK: envelope.Key(msg.ID.Raw()), method: msg.Method, translated: translated}
	if tok := progressToken(params); tok != nil {
		r.nextTok++
		p.token = "hearth-" + strconv.FormatInt(r.nextTok, 10)
		p.clientT = tok
		params = withProgressToken(params, quote(p.token))
		r.progress[p.token] = p
	}
	if r.opts.Mode == Shared && strings.HasSuffix(msg.Method, "/list") && r.cacheable(msg.Method) {
		p.cacheKey, p.cacheGen = c.cacheKey(msg), r.cacheGen
	}
	if msg.Method == "resources/subscribe" && r.opts.Mode == Shared {
		o, _ := decodeObject(params)
		p.uri = o.str("uri")
	}
	if translated && inputCapable(msg.Method) {
		p.sent = params
	}
	r.pending[upKey] = p
	c.inflight[p.clientK] = upKey
	r.sendUp(jsonrpc.RequestFrame(jsonrpc.RawID(id), msg.Method, params))
}

// initialize answers a client's initialize: from the cached result when the
// upstream has been initialized, else once it is; r.mu is held.
func (c *Client) initialize(msg *jsonrpc.Message) {
	r := c.r
	c.inited, c.modern = true, false
	c.caps = parseClientCaps(msg.Params)
	c.initParams, c.metaMembers = msg.Params, nil
	if (r.initResult != nil || r.discover != nil) && r.failure == nil {
		// The cached answer, even while a crashed upstream restarts; a
		// single client's upstream is talked to as it is.
		c.answer(msg.ID, r.initAnswer(c))
		return
	}
	if r.failure != nil {
		c.fail(msg.ID, CodeUpstream, r.failure.Error())
		return
	}
	if r.initParams == nil {
		r.initParams = upstreamInitParams(msg.Params, r.opts.Mode)
	}
	r.initWait = append(r.initWait, waiter{c: c, id: msg.ID.Raw()})
	r.needUpstream()
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

func parseClientCaps(params json.RawMessage) clientCaps {
	var p struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	_ = json.Unmarshal(params, &p)
	_, s := p.Capabilities["sampling"]
	_, e := p.Capabilities["elicitation"]
	_, ro := p.Capabilities["roots"]
	return clientCaps{sampling: s, elicitation: e, roots: ro}
}

// cacheKey keys a cached list by its method and params. On a modern
// upstream a 2025 client's request reaches the upstream with that client's
// own capabilities, and a server may list other things for other
// capabilities, so the key has them too (decision 0038). A modern client's
// params carry its _meta already; on a legacy upstream every client shares
// the capabilities it was initialized with (decision 0034).
func (c *Client) cacheKey(msg *jsonrpc.Message) string {
	k := msg.Method + "\x00" + string(msg.Params)
	if c.r.era == eraModern && modernMeta(msg.Params) == nil {
		p, _ := decodeObject(c.initParams)
		k += "\x00" + string(p["capabilities"])
	}
	return k
}

// cacheable: a list whose changes the upstream announces (listChanged), so
// a cached copy is dropped when it changes; r.mu is held.
func (r *Router) cacheable(method string) bool {
	switch method {
	case "tools/list":
		return r.upCaps.toolsChanged
	case "prompts/list":
		return r.upCaps.promptsChanged
	case "resources/list", "resources/templates/list":
		return r.upCaps.resourcesChanged
	}
	return false
}

// subscription counts a client's resources/subscribe or unsubscribe: only
// the first subscriber's goes upstream, and only the last one's
// unsubscribe. It reports whether the request was answered here; r.mu is
// held.
func (c *Client) subscription(msg *jsonrpc.Message) bool {
	r := c.r
	p, _ := decodeObject(msg.Params)
	uri := p.str("uri")
	if uri == "" {
		return false // let the upstream word the error
	}
	subs := r.subs[uri]
	if msg.Method == "resources/subscribe" {
		if _, held := r.held[uri]; c.subs[uri] || len(subs) > 0 || held {
			// The upstream is subscribed already (for another client, or
			// for one detached by a drain: resume.go).
			r.unhold(uri)
			if subs == nil {
				subs = map[*Client]struct{}{}
				r.subs[uri] = subs
			}
			subs[c] = struct{}{}
			c.subs[uri] = true
			c.answer(msg.ID, json.RawMessage(`{}`))
			return true
		}
		r.subs[uri] = map[*Client]struct{}{c: {}}
		c.subs[uri] = true
		return false
	}
	if !c.subs[uri] {
		c.answer(msg.ID, json.RawMessage(`{}`))
		return true
	}
	delete(c.subs, uri)
	delete(subs, c)
	if len(subs) > 0 {
		c.answer(msg.ID, json.RawMessage(`{}`))
		return true
	}
	delete(r.subs, uri)
	if _, held := r.held[uri]; held {
		c.answer(msg.ID, json.RawMessage(`{}`))
		return true
	}
	return false
}

// unsubscribe releases a gone client's subscription; r.mu is held.
func (r *Router) unsubscribe(c *Client, uri string) {
	subs := r.subs[uri]
	delete(subs, c)
	delete(c.subs, uri)
	if len(subs) == 0 {
		delete(r.subs, uri)
		if _, held := r.held[uri]; held {
			return // a client detached by a drain holds it still
		}
		if r.era == eraModern {
			r.syncURIListens()
			return
		}
		if r.state == ready {
			r.internalRequest("resources/unsubscribe", mustJSON(map[string]string{"uri": uri}))
		}
	}
}

// setLevel records the level a client asked for and rewrites the request to
// set the upstream to the most verbose level any client asked for. It
// reports whether the request goes on; r.mu is held.
func (c *Client) setLevel(msg *jsonrpc.Message, params *json.RawMessage) bool {
	p, _ := decodeObject(msg.Params)
	lvl := levelOf(p.str("level"))
	if lvl < 0 {
		return true // let the upstream word the error
	}
	c.level = lvl
	min := c.r.minLevel()
	c.r.upLevel = min
	*params = withMember(msg.Params, "level", quote(levelNames[min]))
	return true
}

// notification routes a client notification; r.mu is held.
func (c *Client) notification(msg *jsonrpc.Message) {
	r := c.r
	switch msg.Method {
	case "notifications/initialized":
		// The upstream had its own from hearth; a single client's
		// initialize was the upstream's. What the upstream asked of the
		// client before it was initialized reaches it now.
		if !c.initialized {
			c.initialized = true
			c.releaseHeld()
		}
		return
	case "notifications/cancelled":
		p, ok := decodeObject(msg.Params)
		if !ok {
			return
		}
		k := envelope.Key(p["requestId"])
		// A request still queued is dropped: it never reaches the upstream,
		// and a cancelled request gets no answer.
		for i, q := range r.queued {
			if q.c == c && envelope.Key(q.msg.ID.Raw()) == k {
				r.queued = append(r.queued[:i], r.queued[i+1:]...)
				return
			}
		}
		if _, ok := c.listens[k]; ok {
			delete(c.listens, k) // a listen ends without an answer
			r.syncURIListens()
			return
		}
		upKey, ok := c.inflight[k]
		if !ok {
			return // not one of its requests in flight: nothing to cancel
		}
		// The request is the client's no more: a cancelled request gets no
		// answer (the upstream's, should it send one, is dropped), and its
		// id is free again.
		delete(c.inflight, k)
		if pd := r.pending[upKey]; pd != nil {
			pd.c = nil
			if pd.token != "" {
				delete(r.progress, pd.token)
			}
			if pd.round != nil {
				r.dropRound(upKey, pd) // answered already: nothing to cancel upstream
				return
			}
		}
		p["requestId"] = json.RawMessage(upKey)
		r.sendUp(jsonrpc.RawNotificationFrame(msg.Method, p.encode()))
		return
	case "notifications/roots/list_changed":
		if r.era == eraModern || r.opts.Mode == Shared && c != r.rootsFrom {
			// A shared upstream holds one client's roots: only that
			// client's change is the upstream's to hear (it asks that
			// client again, rootsTarget); a modern one asks for roots in
			// each request.
			return
		}
	}
	if r.state == ready {
		r.sendUp(jsonrpc.RawNotificationFrame(msg.Method, msg.Params))
	}
}

// response routes a client's answer to a request the upstream made of it;
// r.mu is held.
func (c *Client) response(msg *jsonrpc.Message) {
	r := c.r
	k := envelope.Key(msg.ID.Raw())
	s, ok := r.s2c[k]
	if !ok || s.c != c {
		return // not a request hearth sent it (or its upstream is gone)
	}
	delete(r.s2c, k)
	s.stop()
	if s.round != nil {
		r.inputAnswered(s, msg)
		return
	}
	delete(r.s2cUp, envelope.Key(s.upID))
	if s.method == "roots/list" && msg.Error == nil {
		r.rootsFrom = c // the upstream now holds its roots
	}
	r.sendUp(jsonrpc.ResponseFrame(jsonrpc.RawID(s.upID), msg.Result, msg.Error))
}
