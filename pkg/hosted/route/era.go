package route

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// The era of the upstream, learned once per upstream process
// (decision 0038): it is sent initialize first, as every legacy server
// expects; only one that refuses it is probed with server/discover.
const (
	eraUnknown = iota
	eraLegacy  // answered initialize
	eraModern  // refused initialize, answered server/discover with 2026-07-28
)

// modernVersion is the one stateless protocol version hearth speaks to an
// upstream and translates for its legacy clients.
const modernVersion = "2026-07-28"

// legacyVersions are the handshake versions hearth negotiates with a legacy
// client of a modern upstream, newest first.
var legacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// eraState is what the upstream is (under Router.mu): its era, learned
// anew for each upstream started, what it was initialized with, its answer
// (kept for every later client, even while a crashed upstream restarts),
// the capabilities it declared, and the handshake in flight.
type eraState struct {
	kind int
	// initParams are what the upstream's initialize is sent with (from the
	// first client's); initResult is a legacy upstream's answer,
	// discover a modern one's DiscoverResult, and refusal its answer to
	// initialize (quoted if the probe fails too).
	initParams json.RawMessage
	initResult json.RawMessage
	discover   json.RawMessage
	refusal    json.RawMessage
	caps       upstreamCaps
	// awaiting is the upstream id key of the initialize or the probe in
	// flight ("": none).
	awaiting string
	// listens are hearth's own on a modern upstream (modern.go).
	listens hearthListens
}

func newEraState() eraState { return eraState{listens: newHearthListens()} }

// answered: the upstream (this one or an earlier process) answered its
// handshake, so a client's initialize is answered at once.
func (e *eraState) answered() bool { return e.initResult != nil || e.discover != nil }

// answer is the initialize result a client gets: the legacy upstream's
// own, or one made from a modern upstream's DiscoverResult.
func (e *eraState) answer(c *Client, name string) json.RawMessage {
	if e.discover != nil {
		return legacyInitResult(e.discover, c.session.initParams, name)
	}
	return e.initResult
}

// legacy: the upstream answered initialize.
func (e *eraState) legacy(result json.RawMessage) {
	e.kind = eraLegacy
	e.initResult, e.discover = result, nil
	e.caps = parseUpstreamCaps(result)
}

// modern: the upstream answered server/discover (or a catalog, or the
// previous daemon, says it did).
func (e *eraState) modern(discover json.RawMessage) {
	e.kind = eraModern
	e.discover, e.initResult = discover, nil
	e.caps = parseUpstreamCaps(discover)
}

// upstreamCaps are what the upstream's capabilities offer the router.
type upstreamCaps struct {
	toolsChanged, promptsChanged, resourcesChanged bool
	resourcesSubscribe                             bool
}

// listChanged: the upstream announces changes of the lists capability
// offers.
func (u upstreamCaps) listChanged(capability string) bool {
	switch capability {
	case "tools":
		return u.toolsChanged
	case "prompts":
		return u.promptsChanged
	case "resources":
		return u.resourcesChanged
	}
	return false
}

func parseUpstreamCaps(result json.RawMessage) upstreamCaps {
	var r struct {
		Capabilities struct {
			Tools     *struct{ ListChanged bool }            `json:"tools"`
			Prompts   *struct{ ListChanged bool }            `json:"prompts"`
			Resources *struct{ ListChanged, Subscribe bool } `json:"resources"`
		} `json:"capabilities"`
	}
	_ = json.Unmarshal(result, &r)
	var c upstreamCaps
	c.toolsChanged = r.Capabilities.Tools != nil && r.Capabilities.Tools.ListChanged
	c.promptsChanged = r.Capabilities.Prompts != nil && r.Capabilities.Prompts.ListChanged
	c.resourcesChanged = r.Capabilities.Resources != nil && r.Capabilities.Resources.ListChanged
	c.resourcesSubscribe = r.Capabilities.Resources != nil && r.Capabilities.Resources.Subscribe
	return c
}

// sendInitialize sends the upstream its initialize; r.mu is held.
func (r *Router) sendInitialize() {
	id, key := r.flight.own("initialize", r.initialized)
	r.era.awaiting = key
	r.sendUp(jsonrpc.RequestFrame(jsonrpc.RawID(id), "initialize", r.era.initParams))
}

// initialized handles the upstream's answer to initialize; r.mu is held.
// A refusal is not the end: a 2026-07-28 server refuses initialize, so it
// is probed with server/discover (decision 0038).
func (r *Router) initialized(result, errObj json.RawMessage) {
	r.era.awaiting = ""
	if errObj != nil {
		r.era.refusal = errObj
		r.probeDiscover()
		return
	}
	if err := checkInitResult(result); err != nil {
		// What every later client would be given as the server's own
		// answer: refused here as a catalog entry holding it is
		// (CheckCatalog), with a valid error in its place.
		msg := fmt.Sprintf("%s sent an invalid response to initialize: %v", r.opts.Name, err)
		r.failStart(rpcError(CodeUpstream, r.UpstreamError("%s", msg).Error()), errors.New(msg))
		return
	}
	r.era.legacy(result)
	r.sendUp(jsonrpc.RawNotificationFrame("notifications/initialized", nil))
	r.becomeReady()
}

// probeDiscover asks an upstream that refused initialize whether it speaks
// 2026-07-28; r.mu is held.
func (r *Router) probeDiscover() {
	id, key := r.flight.own("server/discover", r.discovered)
	r.era.awaiting = key
	params := mustJSON(map[string]any{"_meta": metaFromInit(r.era.initParams, -1)})
	r.sendUp(jsonrpc.RequestFrame(jsonrpc.RawID(id), "server/discover", params))
}

// discovered handles the probe's answer: a valid DiscoverResult naming
// 2026-07-28 makes the upstream modern; anything else fails the start,
// quoting both refusals; r.mu is held.
func (r *Router) discovered(result, errObj json.RawMessage) {
	r.era.awaiting = ""
	why := ""
	if errObj != nil {
		why = "server/discover: " + errorMessage(errObj)
	} else if err := checkDiscover(result); err != nil {
		why = err.Error()
	}
	if why != "" {
		msg := fmt.Sprintf("%s refused initialize (%s) and is no 2026-07-28 server either (%s)", r.opts.Name, errorMessage(r.era.refusal), why)
		r.failStart(rpcError(CodeUpstream, r.UpstreamError("%s", msg).Error()), fmt.Errorf("%s", msg))
		return
	}
	r.era.modern(result)
	r.becomeReady()
}

// becomeReady: the upstream's era is known and it serves; the clients
// waiting get their initialize answered, what the clients had open is
// opened again on a restarted upstream, and queued requests go; r.mu is
// held.
func (r *Router) becomeReady() {
	r.link.state = ready
	r.cat.seeded = false // the upstream's own answer from now on
	for _, w := range r.link.waiting {
		w.c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(w.id), r.era.answer(w.c, r.opts.Name), nil))
	}
	r.link.waiting = nil
	if r.era.kind == eraModern {
		r.openListens()
	} else {
		for uri := range r.subs.byURI {
			r.internalRequest("resources/subscribe", mustJSON(map[string]string{"uri": uri}))
		}
		r.syncBridgeSubs()
		if lvl := r.minLevel(); lvl >= 0 {
			r.link.level = lvl
			r.internalRequest("logging/setLevel", mustJSON(map[string]string{"level": levelNames[lvl]}))
		}
	}
	queued := r.link.queued
	r.link.queued = nil
	for _, q := range queued {
		if q.c.gone {
			continue
		}
		r.forward(q.c, q.q, q.m)
	}
	r.fetchCatalog()
	r.opts.Ready(r.era.kind == eraModern)
}

// failStart answers the clients waiting for the upstream's start with
// errObj and has the upstream stopped (why); r.mu is held.
func (r *Router) failStart(errObj json.RawMessage, why error) {
	for _, w := range r.link.waiting {
		w.c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(w.id), nil, errObj))
	}
	r.link.waiting = nil
	r.opts.Trouble(why)
}

// Awaiting names what a starting upstream has not answered yet, for the
// error given when it never does: "initialize", or the probe that followed
// its refusal.
func (r *Router) Awaiting() string {
	r.mu.Lock()
	defer r.unlock()
	if p := r.flight.get(r.era.awaiting); p != nil && p.method == "server/discover" {
		return "server/discover after refusing initialize (" + errorMessage(r.era.refusal) + ")"
	}
	return "initialize"
}

// ProtocolVersion is the version the upstream answered initialize with (""
// before it has).
func (r *Router) ProtocolVersion() string {
	r.mu.Lock()
	defer r.unlock()
	if r.era.discover != nil {
		return modernVersion
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(r.era.initResult, &res)
	return res.ProtocolVersion
}

// legacyInitResult is the initialize result a legacy client of a modern
// upstream gets, made from the upstream's DiscoverResult: its capabilities,
// serverInfo and instructions, and the protocol version negotiated as the
// 2025 handshake does (the client's own when hearth knows it, else the
// newest).
func legacyInitResult(discover, clientParams json.RawMessage, name string) json.RawMessage {
	d, _ := decodeObject(discover)
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(clientParams, &p)
	version := legacyVersions[0]
	if slices.Contains(legacyVersions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	out := object{"protocolVersion": quote(version), "capabilities": json.RawMessage(`{}`)}
	if caps, ok := decodeObject(d["capabilities"]); ok {
		out["capabilities"] = caps.encode()
	}
	out["serverInfo"] = mustJSON(map[string]string{"name": name, "version": "unknown"})
	if meta, ok := decodeObject(d["_meta"]); ok {
		if info := implementation(meta[metaServerInfo]); info != nil {
			out["serverInfo"] = info
		}
	}
	var instr string
	if json.Unmarshal(d["instructions"], &instr) == nil && instr != "" {
		out["instructions"] = quote(instr)
	}
	return out.encode()
}

// implementation returns raw when it is an Implementation ({name, version}
// strings), else nil.
func implementation(raw json.RawMessage) json.RawMessage {
	var impl struct {
		Name    *string `json:"name"`
		Version *string `json:"version"`
	}
	if json.Unmarshal(raw, &impl) != nil || impl.Name == nil || impl.Version == nil {
		return nil
	}
	return raw
}

// metaFromInit is the 2026-07-28 _meta of a request made on behalf of a
// client that opened with initialize: the version, its capabilities and
// clientInfo from those initialize params, and its log level (level < 0:
// none). An ill-typed member of the params is left out (capabilities
// become {}): the client's request still goes, as the upstream would have
// taken a lenient initialize.
func metaFromInit(initParams json.RawMessage, level int) object {
	p, _ := decodeObject(initParams)
	m := object{metaVersion: quote(modernVersion), metaCapabilities: json.RawMessage(`{}`)}
	if caps, ok := decodeObject(p["capabilities"]); ok {
		m[metaCapabilities] = caps.encode()
	}
	if info := implementation(p["clientInfo"]); info != nil {
		m[metaClientInfo] = info
	}
	if level >= 0 {
		m[metaLogLevel] = quote(levelNames[level])
	}
	return m
}

// withModernMeta gives a legacy client's request to a modern upstream the
// 2026-07-28 _meta made of its initialize and log level (metaFromInit),
// over the _meta members it has of its own (a progress token). The members
// are made once per initialize or level.
func (c *Client) withModernMeta(q *request) {
	if c.session.meta == nil {
		m := metaFromInit(c.session.initParams, c.session.level)
		c.session.meta = make([]member, 0, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			c.session.meta = append(c.session.meta, member{k, m[k]})
		}
	}
	if q.setMeta == nil {
		// One list, with room for the progress token hearth gives.
		q.setMeta = append(make([]member, 0, len(c.session.meta)+1), c.session.meta...)
		return
	}
	for _, m := range c.session.meta {
		q.setMetaMember(m.key, m.val)
	}
}

// initParamsFromMeta are initialize params made from a modern request's
// _meta, for an upstream that turns out to be legacy when a modern client
// came first, and for the shape of a modern client (ShapeOf).
func initParamsFromMeta(q *request) json.RawMessage {
	out := object{"protocolVersion": quote(legacyVersions[0]), "capabilities": json.RawMessage(`{}`),
		"clientInfo": mustJSON(map[string]string{"name": "hearth", "version": "unknown"})}
	if caps := q.metaObject(metaCapabilities); caps != nil {
		if o, ok := decodeObject(caps); ok {
			out["capabilities"] = o.encode()
		}
	}
	if info := implementation(q.metaObject(metaClientInfo)); info != nil {
		out["clientInfo"] = info
	}
	return out.encode()
}

// withMeta returns params with the given _meta members set over its own
// (progressToken and the rest are kept).
func withMeta(params json.RawMessage, set object) json.RawMessage {
	p, ok := decodeObject(params)
	if !ok {
		if len(params) != 0 && string(params) != "null" {
			return params // not an object: the upstream words the error
		}
		p = object{}
	}
	meta, ok := decodeObject(p["_meta"])
	if !ok {
		meta = object{}
	}
	for k, v := range set {
		meta[k] = v
	}
	p["_meta"] = meta.encode()
	return p.encode()
}
