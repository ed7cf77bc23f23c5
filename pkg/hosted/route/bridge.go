package route

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// The era bridge (docs/decisions/0072-era-bridge.md): a 2026-07-28 client
// of a 2025 upstream is served in 2026-07-28 terms. Its server/discover is
// answered from the upstream's initialize result; its results carry
// resultType; its log level is the one its request's _meta names; its
// listens are fed from the upstream's list-changed notifications and
// resources/subscribe. A request the upstream makes of it during one of its
// calls (sampling, elicitation, roots) cannot reach it, as 2026-07-28 has
// no server-to-client requests: the call is parked, the client's request
// answered with an InputRequiredResult asking for the same, and the
// client's retry (another id, inputResponses, the requestState hearth gave)
// carries the answers to the upstream's requests, which were waiting all
// along; the call goes on under the retry's id.

// bridgeState is the router's side of the bridge (under Router.mu): the key
// of its requestStates, and the calls parked for input by number.
type bridgeState struct {
	key    []byte
	last   int64
	parked map[int64]*pend
	// subs are the URIs the upstream was sent resources/subscribe for
	// because a 2026-07-28 client's listen names them.
	subs map[string]bool
}

func newBridgeState() bridgeState {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand never fails (Go 1.24)
	return bridgeState{key: key, parked: map[int64]*pend{}, subs: map[string]bool{}}
}

// bridgeCall is what a 2026-07-28 client's call to a 2025 upstream holds
// for the bridge: the digest of what it asks (a requestState is bound to
// it), and, once the upstream asked for input, the requests waiting for
// the client's answers and whether the call is parked.
type bridgeCall struct {
	digest string
	upKey  string
	asks   []string // s2c keys of the upstream's requests not answered, as they came
	parked int64    // its number while parked (0: not parked)
	timer  *time.Timer
	// final is the upstream's answer to the call while it was parked,
	// given to the retry.
	final      bool
	result     json.RawMessage
	errObj     json.RawMessage
	lastAskKey int
}

// removedMethods are the 2025 requests 2026-07-28 has no more: a
// 2026-07-28 request of one is refused -32601, as a 2026-07-28 server
// would (log levels go in _meta, subscriptions in subscriptions/listen).
var removedMethods = map[string]bool{"ping": true, "logging/setLevel": true, "resources/subscribe": true, "resources/unsubscribe": true}

// inputMethods are the requests an InputRequiredResult may answer
// (basic/patterns/mrtr, "Supported Requests").
var inputMethods = []string{"tools/call", "prompts/get", "resources/read"}

func isInputMethod(m string) bool {
	for _, n := range inputMethods {
		if n == m {
			return true
		}
	}
	return false
}

// bridged: c is a 2026-07-28 client of a 2025 upstream: it sent a request
// other than the probe with 2026-07-28 _meta (one that only probed may
// still fall back to initialize).
func (r *Router) bridged(c *Client) bool {
	return c.session.modern && c.session.initialized && r.era.kind == eraLegacy
}

// refuseHeld answers the upstream's requests held for a client that
// turned out to speak 2026-07-28 before it was asked them: they belong to
// none of its calls, and 2026-07-28 has no other way to ask them
// (docs/decisions/0072-era-bridge.md); r.mu is held.
func (r *Router) refuseHeld(c *Client) {
	for _, s := range r.s2c.heldFor(c) {
		k, _ := r.s2c.forUp(envelope.Key(s.upID))
		r.s2c.take(k)
		r.sendUp(jsonrpc.ResponseFrame(jsonrpc.RawID(s.upID), nil, rpcError(CodeShared, "hearth: the client this "+s.method+
			" is for speaks 2026-07-28, which takes it only as the input_required result of one of its calls, and it has none in flight")))
	}
}

// discoverFromLegacy answers a 2026-07-28 client's server/discover from a
// 2025 upstream's initialize result (a running upstream's, or the
// catalog's: nothing is started for it).
// A request without 2026-07-28 _meta (a client that opened with
// initialize) is refused as a 2025 server would refuse it.
func (c *Client) discoverFromLegacy(q *request) {
	if !q.modern {
		c.fail(q.msg.ID, jsonrpc.CodeMethodNotFound, "Method not found: server/discover ("+c.r.opts.Name+" speaks the 2025 protocol, and the request has no 2026-07-28 _meta)")
		return
	}
	c.answer(q.msg.ID, discoverFromInit(c.r.era.initResult, c.r.opts.Name))
}

// discoverFromInit makes a DiscoverResult of an initialize result: its
// capabilities, serverInfo and instructions. It is stale at once (ttlMs 0):
// a restarted upstream may answer initialize otherwise.
func discoverFromInit(initResult json.RawMessage, name string) json.RawMessage {
	d, _ := decodeObject(initResult)
	out := object{"resultType": quote("complete"), "supportedVersions": json.RawMessage(`["` + modernVersion + `"]`),
		"capabilities": json.RawMessage(`{}`), "ttlMs": json.RawMessage(`0`), "cacheScope": quote("private")}
	if caps, ok := decodeObject(d["capabilities"]); ok {
		out["capabilities"] = caps.encode()
	}
	info := implementation(d["serverInfo"])
	if info == nil {
		info = mustJSON(map[string]string{"name": name, "version": "unknown"})
	}
	out["_meta"] = object{metaServerInfo: info}.encode()
	var instr string
	if json.Unmarshal(d["instructions"], &instr) == nil && instr != "" {
		out["instructions"] = quote(instr)
	}
	return out.encode()
}

// completeResult gives a 2025 upstream's result the resultType a
// 2026-07-28 result must carry ("complete"), unless it has one.
func completeResult(result json.RawMessage) json.RawMessage {
	t := bytes.TrimLeft(result, " \t\r\n")
	if len(t) < 2 || t[0] != '{' {
		return result
	}
	if bytes.Contains(t, []byte(`"resultType"`)) {
		if o, ok := decodeObject(t); ok {
			if _, has := o["resultType"]; has {
				return result
			}
		}
	}
	rest := bytes.TrimLeft(t[1:], " \t\r\n")
	out := make([]byte, 0, len(t)+26)
	out = append(out, `{"resultType":"complete"`...)
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// listenOnLegacy opens a 2026-07-28 client's subscriptions/listen on a 2025
// upstream: acknowledged with what the upstream's capabilities announce,
// fed from its list-changed notifications, and for resource URIs from
// resources/subscribe sent on its behalf (syncBridgeSubs).
func (c *Client) listenOnLegacy(q *request) { c.listen(q) }

// syncBridgeSubs subscribes a 2025 upstream to each URI a 2026-07-28
// client's listen names and nobody subscribed to, and unsubscribes those
// no listen and no client wants any more; r.mu is held.
func (r *Router) syncBridgeSubs() {
	if r.link.state != ready || r.link.out == nil {
		return
	}
	want := map[string]bool{}
	for c := range r.clients.set {
		for _, l := range c.subs.listens {
			for uri := range l.uris {
				want[uri] = true
			}
		}
	}
	for uri := range want {
		if !r.bridge.subs[uri] {
			r.bridge.subs[uri] = true
			if !r.subs.upstreamHas(uri) {
				r.internalRequest("resources/subscribe", mustJSON(map[string]string{"uri": uri}))
			}
		}
	}
	for uri := range r.bridge.subs {
		if !want[uri] {
			delete(r.bridge.subs, uri)
			if !r.subs.upstreamHas(uri) {
				r.internalRequest("resources/unsubscribe", mustJSON(map[string]string{"uri": uri}))
			}
		}
	}
}

// modernLevel takes the log level a 2026-07-28 request of a 2025
// upstream's client names in its _meta (none: no log messages for it) and
// sets the upstream to the most verbose any client asks for; r.mu is held.
func (c *Client) modernLevel(q *request) {
	r := c.r
	lvl := -1
	if n := q.doc.Get(q.meta, metaLogLevel); n != nil && n.Kind() == jsonval.String {
		lvl = levelOf(q.doc.Str(n))
	}
	if lvl == c.session.level {
		return
	}
	c.session.level = lvl
	if r.era.kind != eraLegacy || r.link.state != ready {
		return // a starting upstream is set to it once ready (becomeReady)
	}
	if min := r.minLevel(); min >= 0 && (r.link.level < 0 || min < r.link.level) {
		r.link.level = min
		r.internalRequest("logging/setLevel", mustJSON(map[string]string{"level": levelNames[min]}))
		return
	}
	r.relaxLevel()
}

// requestDigest is what a requestState binds a retry to: the method and
// the request's params but for its _meta, inputResponses and requestState.
func requestDigest(method string, params json.RawMessage) string {
	p, _ := decodeObject(params)
	if p == nil {
		p = object{}
	}
	delete(p, "_meta")
	delete(p, "inputResponses")
	delete(p, "requestState")
	sum := sha256.Sum256([]byte(method + "\x00" + canonical(p.encode())))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// stateClaims are what a requestState of hearth's says: the parked call's
// number, the method and digest of the request it answers, and when it
// expires (Unix milliseconds).
type stateClaims struct {
	N int64  `json:"n"`
	M string `json:"m"`
	D string `json:"d"`
	X int64  `json:"x"`
}

const statePrefix = "hearth1."

// seal writes a requestState: the claims and their HMAC-SHA256 under the
// router's key, base64url.
func (b *bridgeState) seal(cl stateClaims) string {
	payload, _ := json.Marshal(cl)
	mac := hmac.New(sha256.New, b.key)
	mac.Write(payload)
	return statePrefix + base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

var errForged = errors.New("requestState is not one hearth gave (it was altered, forged, or given by another hearth)")

// open checks a requestState's MAC and reads its claims.
func (b *bridgeState) open(state string) (stateClaims, error) {
	var cl stateClaims
	body, ok := strings.CutPrefix(state, statePrefix)
	if !ok {
		return cl, errForged
	}
	p64, m64, ok := strings.Cut(body, ".")
	if !ok {
		return cl, errForged
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p64)
	sum, err2 := base64.RawURLEncoding.DecodeString(m64)
	if err1 != nil || err2 != nil {
		return cl, errForged
	}
	mac := hmac.New(sha256.New, b.key)
	mac.Write(payload)
	if !hmac.Equal(sum, mac.Sum(nil)) || json.Unmarshal(payload, &cl) != nil {
		return cl, errForged
	}
	return cl, nil
}

// inputCall is the one request of c in flight that an InputRequiredResult
// may answer (nil: none, or several, so which one the upstream's request
// belongs to is not certain); r.mu is held.
func (c *Client) inputCall() *pend {
	var found *pend
	for _, upKey := range c.inflight {
		p := c.r.flight.get(upKey)
		if p == nil || !isInputMethod(p.method) {
			continue
		}
		if found != nil {
			return nil
		}
		found = p
		if p.bridge == nil {
			p.bridge = &bridgeCall{}
		}
		p.bridge.upKey = upKey
	}
	return found
}

// bridgeAsk takes a 2025 upstream's request of a 2026-07-28 client (its
// sampling, elicitation or roots): it waits for the client's answer in the
// retry of the call it belongs to, which is parked and answered with an
// InputRequiredResult; r.mu is held.
func (r *Router) bridgeAsk(c *Client, msg *jsonrpc.Message) {
	p := c.inputCall()
	if p == nil {
		r.sendUp(jsonrpc.ResponseFrame(msg.ID, nil, rpcError(CodeShared, "hearth: the client this "+msg.Method+
			" is for speaks 2026-07-28, which takes it only as the input_required result of one tools/call, prompts/get or resources/read in flight, and it has "+
			"no single such request in flight")))
		return
	}
	r.addAsk(p, c, msg)
	if p.bridge.parked == 0 {
		r.parkCall(p)
	}
}

// addAsk records the upstream's request msg as one the call p waits on
// its client c's answer to, under an input key of its own; r.mu is held.
func (r *Router) addAsk(p *pend, c *Client, msg *jsonrpc.Message) {
	b := p.bridge
	b.lastAskKey++
	key := strings.ReplaceAll(msg.Method, "/", "-") + "-" + strconv.Itoa(b.lastAskKey)
	s := &s2cReq{c: c, upID: append(json.RawMessage(nil), msg.ID.Raw()...), method: msg.Method, key: key, call: p,
		params: append(json.RawMessage(nil), msg.Params...)}
	_, k := r.s2c.add(s)
	b.asks = append(b.asks, k)
}

// askParked takes a 2025 upstream's request of a client made while a
// 2026-07-28 client's call is parked and no client has a request in
// flight: it can be that call's alone (its upstream went on asking while
// the client gathers the first answers), and is asked in the call's next
// round; it reports whether it took it; r.mu is held.
func (r *Router) askParked(msg *jsonrpc.Message) bool {
	if r.era.kind != eraLegacy || len(r.bridge.parked) != 1 {
		return false
	}
	if _, n := r.clients.withRequests(); n != 0 {
		return false
	}
	switch msg.Method {
	case "sampling/createMessage", "elicitation/create", "roots/list":
	default:
		return false
	}
	var p *pend
	for _, q := range r.bridge.parked {
		p = q
	}
	if p.c == nil {
		return false
	}
	if missing := p.c.session.lacks(msg.Method); missing != "" {
		return false // refused as any request for a capability not declared
	}
	r.addAsk(p, p.c, msg)
	return true
}

// parkCall answers a call whose upstream waits for its client's input with
// an InputRequiredResult asking for what it waits for, and keeps it
// parked until the client retries or AnswerTimeout passes; r.mu is held.
func (r *Router) parkCall(p *pend) {
	b, c := p.bridge, p.c
	r.bridge.last++
	n := r.bridge.last
	b.parked = n
	r.bridge.parked[n] = p
	delete(c.inflight, p.clientK)
	inputs := object{}
	for _, k := range b.asks {
		s := r.s2c.get(k)
		if s == nil {
			continue
		}
		// params always: an upstream's roots/list may have none, which
		// the schema allows but clients' decoders refuse (the Go SDK's
		// v1.8.0 unmarshals an absent params and fails the call).
		req := object{"method": quote(s.method), "params": json.RawMessage(`{}`)}
		if len(s.params) > 0 && string(s.params) != "null" {
			req["params"] = s.params
		}
		inputs[s.key] = req.encode()
	}
	expiry := time.Now().Add(r.opts.AnswerTimeout)
	state := r.bridge.seal(stateClaims{N: n, M: p.method, D: b.digest, X: expiry.UnixMilli()})
	result := object{"resultType": quote("input_required"), "inputRequests": inputs.encode(), "requestState": quote(state)}
	c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(p.id), result.encode(), nil))
	b.timer = time.AfterFunc(r.opts.AnswerTimeout, func() { r.parkExpired(n) })
}

// parkExpired gives up a parked call whose client never retried: the
// upstream's requests are answered with an error (so the call ends), and
// its answer, when it comes, goes nowhere.
func (r *Router) parkExpired(n int64) {
	r.mu.Lock()
	defer r.unlock()
	p := r.bridge.parked[n]
	if p == nil {
		return
	}
	r.unpark(p)
	why := "hearth: the 2026-07-28 client did not retry its " + p.method + " with the input asked of it within " + r.opts.AnswerTimeout.String() + " (see answer_timeout)"
	r.failAsks(p, why)
	p.c = nil
	r.flight.dropToken(p)
}

// unpark takes a call out of the parked table; r.mu is held.
func (r *Router) unpark(p *pend) {
	b := p.bridge
	delete(r.bridge.parked, b.parked)
	b.parked = 0
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
}

// failAsks answers each of the call's waiting upstream requests with an
// error; r.mu is held.
func (r *Router) failAsks(p *pend, why string) {
	for _, k := range p.bridge.asks {
		if s := r.s2c.take(k); s != nil && r.link.out != nil {
			r.sendUp(jsonrpc.ResponseFrame(jsonrpc.RawID(s.upID), nil, rpcError(CodeUnanswered, why)))
		}
	}
	p.bridge.asks = nil
}

// parkedAnswer keeps the upstream's answer to a parked call for its retry;
// it reports whether the call was parked; r.mu is held.
func (r *Router) parkedAnswer(k string, p *pend, result, errObj json.RawMessage) bool {
	if p.bridge == nil || p.bridge.parked == 0 {
		return false
	}
	r.flight.remove(k)
	p.bridge.final, p.bridge.result, p.bridge.errObj = true, result, errObj
	return true
}

// resume takes a 2026-07-28 client's retry of a parked call: its
// requestState is checked (hearth's own, for this very request, not
// expired, not used before), its inputResponses go to the upstream's
// requests they answer, and the call goes on under the retry's id; what is
// still unanswered is asked again at once. Keys hearth did not ask are
// ignored, as the specification asks of a server; r.mu is held.
func (r *Router) resume(c *Client, q *request) {
	fail := func(why string) { c.fail(q.msg.ID, jsonrpc.CodeInvalidParams, "Invalid params: "+why) }
	raw := q.param("requestState")
	if raw == nil {
		fail("inputResponses without requestState: hearth asks for input only with a requestState, which the retry must echo")
		return
	}
	var state string
	if json.Unmarshal(raw, &state) != nil {
		fail("requestState is not a string")
		return
	}
	cl, err := r.bridge.open(state)
	if err != nil {
		fail(err.Error())
		return
	}
	if cl.M != q.msg.Method || cl.D != requestDigest(q.msg.Method, q.msg.Params) {
		fail("requestState was given for another request (a retry must repeat the request it answers, with the same params)")
		return
	}
	if time.Now().UnixMilli() > cl.X {
		fail("requestState expired: the input was asked for " + r.opts.AnswerTimeout.String() + " before (see answer_timeout)")
		return
	}
	p := r.bridge.parked[cl.N]
	if p == nil {
		fail("requestState was used already, or the call it continues is over")
		return
	}
	answers := object{}
	if rawAns := q.param("inputResponses"); rawAns != nil && !isNull(rawAns) {
		o, ok := decodeObject(rawAns)
		if !ok {
			fail("inputResponses is not an object")
			return
		}
		for key, v := range o {
			if _, ok := decodeObject(v); !ok {
				fail("inputResponses[" + strconv.Quote(key) + "] is not a result object")
				return
			}
		}
		answers = o
	}
	b := p.bridge
	r.unpark(p)
	var left []string
	for _, k := range b.asks {
		s := r.s2c.get(k)
		if s == nil {
			continue
		}
		ans, ok := answers[s.key]
		if !ok {
			s.c = c
			left = append(left, k)
			continue
		}
		r.s2c.take(k)
		if s.method == "roots/list" {
			r.clients.rootsFrom = c
		}
		r.sendUp(jsonrpc.ResponseFrame(jsonrpc.RawID(s.upID), ans, nil))
	}
	b.asks = left
	p.c, p.id, p.clientK = c, q.msg.ID.Raw(), q.msg.ID.Key()
	if q.token != nil && p.progress.token != "" {
		p.progress.client = q.token
	}
	if b.final {
		r.failAsks(p, "hearth: the call these were asked for is over")
		c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(p.id), answerFor(c, r, p.method, b.result, b.errObj), b.errObj))
		return
	}
	c.inflight[p.clientK] = b.upKey
	if len(b.asks) > 0 {
		r.parkCall(p)
	}
}

// answerFor is the result of a request of method a client gets: a
// 2026-07-28 client of a 2025 upstream's with its resultType and a list's
// caching hints (order.go); r.mu is held.
func answerFor(c *Client, r *Router, method string, result, errObj json.RawMessage) json.RawMessage {
	if errObj != nil || result == nil || !r.bridged(c) {
		return result
	}
	return completeResult(r.withCacheHints(method, result))
}

// clearBridge forgets every parked call (their upstream is gone); r.mu is
// held.
func (r *Router) clearBridge() {
	for _, p := range r.bridge.parked {
		if p.bridge.timer != nil {
			p.bridge.timer.Stop()
		}
	}
	clear(r.bridge.parked)
	clear(r.bridge.subs)
}

// isParked: the call is parked for its client's input.
func (p *pend) isParked() bool { return p.bridge != nil && p.bridge.parked != 0 }
