package route

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// upstreamResponse returns an answer to the client whose request it is,
// under the client's own id; r.mu is held.
func (r *Router) upstreamResponse(msg *jsonrpc.Message) error {
	k := envelope.Key(msg.ID.Raw())
	if _, ok := r.pending[k]; !ok {
		return nil // an answer to nothing in flight (or to a cancelled request of a gone client)
	}
	if why := badErrorObject(msg.Error); why != "" {
		return r.answerInvalid(k, why)
	}
	r.settle(k, msg.Result, msg.Error)
	return nil
}

// settle hands the answer to the request in flight under upstream id key k
// to whoever made it; r.mu is held.
func (r *Router) settle(k string, result, errObj json.RawMessage) {
	p, ok := r.pending[k]
	if !ok {
		return
	}
	if p.translated && p.c != nil && !p.c.gone && errObj == nil && inputRequired(result) {
		r.askForInput(k, p, result) // the request stays the client's
		return
	}
	delete(r.pending, k)
	if p.token != "" {
		delete(r.progress, p.token)
	}
	if p.internal != nil {
		p.internal(result, errObj)
		return
	}
	if p.c == nil || p.c.gone {
		return
	}
	delete(p.c.inflight, p.clientK)
	if p.cacheKey != "" && errObj == nil && p.cacheGen == r.cacheGen {
		r.cache[p.cacheKey] = result
	}
	if p.uri != "" && errObj != nil {
		// The upstream refused: the client holds no subscription.
		delete(p.c.subs, p.uri)
		if subs := r.subs[p.uri]; subs != nil {
			delete(subs, p.c)
			if len(subs) == 0 {
				delete(r.subs, p.uri)
			}
		}
	}
	p.c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(p.id), result, errObj))
}

// ErrInvalidResponse: a line of the upstream's stdout answered a request
// in flight but is no valid JSON-RPC response; the request was answered
// with an error saying so in its place.
var ErrInvalidResponse = errors.New("an invalid response")

// answerInvalid answers the request in flight under upstream id key k with
// an error saying the upstream's response to it was invalid (why), so its
// client gets a valid JSON-RPC error in place of the malformed frame, and
// returns the error for the instance's log; r.mu is held.
func (r *Router) answerInvalid(k, why string) error {
	method := r.pending[k].method
	r.settle(k, nil, rpcError(jsonrpc.CodeInternalError, r.opts.Name+" sent an invalid response to "+method+": "+why))
	return fmt.Errorf("%w to %s (answered to its client as an error): %s", ErrInvalidResponse, method, why)
}

// badErrorObject says what is wrong with a response's error member ("" when
// it is absent or is an object with an integer code and a string message,
// as JSON-RPC 2.0 requires).
func badErrorObject(errObj json.RawMessage) string {
	if errObj == nil {
		return ""
	}
	o, ok := decodeObject(errObj)
	if !ok {
		return "its error is " + shortText(errObj) + ", not an object"
	}
	var code int64
	if c, ok := o["code"]; !ok || isNull(c) || json.Unmarshal(c, &code) != nil {
		return "its error has no integer code: " + shortText(errObj)
	}
	var msg string
	if m, ok := o["message"]; !ok || isNull(m) || json.Unmarshal(m, &msg) != nil {
		return "its error has no string message: " + shortText(errObj)
	}
	return ""
}

// isNull: the JSON text is null (which json.Unmarshal takes into anything).
func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

// shortText is JSON text for an error message, cut to 80 bytes.
func shortText(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// upstreamRequest routes a request the upstream makes of a client: ping is
// answered here; anything else goes to the one client it is for when that
// is certain, or is refused (decision 0035); roots/list is answered by a
// client too, never by hearth (rootsTarget); r.mu is held.
func (r *Router) upstreamRequest(msg *jsonrpc.Message) {
	id := msg.ID.Raw()
	if msg.Method == "ping" {
		r.sendUp(jsonrpc.ResponseFrame(jsonrpc.RawID(id), json.RawMessage(`{}`), nil))
		return
	}
	var target *Client
	var why string
	if msg.Method == "roots/list" {
		target, why = r.rootsTarget()
	} else {
		target, why = r.causingClient()
	}
	if target == nil {
		r.sendUp(jsonrpc.ResponseFrame(jsonrpc.RawID(id), nil, rpcError(CodeShared, why)))
		return
	}
	if missing := target.lacks(msg.Method); missing != "" {
		r.sendUp(jsonrpc.ResponseFrame(jsonrpc.RawID(id), nil, rpcError(jsonrpc.CodeMethodNotFound,
			"the client this "+msg.Method+" is for did not declare the "+missing+" capability")))
		return
	}
	r.nextS2C++
	cid := strconv.AppendInt(nil, r.nextS2C, 10)
	k := envelope.Key(cid)
	s := &s2cReq{c: target, upID: append(json.RawMessage(nil), id...), re: target.aRequest(), method: msg.Method, seq: r.nextS2C}
	r.s2c[k] = s
	r.s2cUp[envelope.Key(id)] = k
	s.timer = time.AfterFunc(r.opts.AnswerTimeout, func() { r.unanswered(k, s) })
	frame := jsonrpc.RequestFrame(jsonrpc.RawID(cid), msg.Method, msg.Params)
	if !target.initialized {
		// A server asks its client only once the client is initialized:
		// one that started the upstream with a probe, or whose initialize
		// the upstream's own preceded, hears of it after its
		// notifications/initialized, as it would from a server it spawned.
		s.held = frame
		return
	}
	target.pushFor(frame, s.re)
}

// releaseHeld sends the client the requests the upstream made of it before
// it was initialized (upstreamRequest), in the order they came; r.mu is
// held.
func (c *Client) releaseHeld() {
	r := c.r
	var held []*s2cReq
	for _, s := range r.s2c {
		if s.c == c && s.held != nil {
			held = append(held, s)
		}
	}
	slices.SortFunc(held, func(a, b *s2cReq) int { return cmp.Compare(a.seq, b.seq) })
	for _, s := range held {
		f := s.held
		s.held = nil
		c.pushFor(f, s.re)
	}
}

// unanswered ends a request the upstream made of a client that the client
// did not answer within AnswerTimeout: the upstream gets CodeUnanswered for
// it, so the call that asked finishes and the client's request stops
// counting as in flight (which refused every other client's sampling,
// decision 0035), and the client is told the request is cancelled.
func (r *Router) unanswered(k string, s *s2cReq) {
	r.mu.Lock()
	defer r.unlock()
	if r.s2c[k] != s {
		return // answered, cancelled, or its client or upstream gone meanwhile
	}
	delete(r.s2c, k)
	delete(r.s2cUp, envelope.Key(s.upID))
	why := "hearth: the client did not answer " + s.method + " within " + r.opts.AnswerTimeout.String() +
		" (a client must answer a request the server makes of it; see answer_timeout)"
	if s.held != nil {
		why = "hearth: the client did not finish its initialization within " + r.opts.AnswerTimeout.String() + ", so it was never asked " + s.method
	}
	r.sendUp(jsonrpc.ResponseFrame(jsonrpc.RawID(s.upID), nil, rpcError(CodeUnanswered, why)))
	if s.held == nil {
		s.c.pushFor(jsonrpc.RawNotificationFrame("notifications/cancelled",
			mustJSON(map[string]any{"requestId": json.RawMessage(k), "reason": why})), s.re)
	}
}

// causingClient is the client a server-to-client request is for when that
// is certain: the single client of a client instance, or on a shared one
// the only client with a request in flight, else, with none in flight,
// the only client attached (the upstream serves nobody else). Otherwise it
// says why not; r.mu is held.
func (r *Router) causingClient() (*Client, string) {
	if r.opts.Mode == Single || len(r.clients) == 1 {
		for c := range r.clients {
			return c, ""
		}
		return nil, "hearth: no client is attached to " + r.opts.Name
	}
	var only *Client
	n := 0
	for c := range r.clients {
		if len(c.inflight) > 0 {
			only = c
			n++
		}
	}
	switch n {
	case 1:
		return only, ""
	case 0:
		return nil, "hearth: " + r.opts.Name + " is shared by several clients and no client has a request in flight, " +
			"so which client this request is for is not certain; it is refused (run the server with sharing = \"client\" to send it its client's requests)"
	default:
		return nil, "hearth: " + r.opts.Name + " is shared and " + strconv.Itoa(n) + " clients have requests in flight, " +
			"so which client this request is for is not certain; it is refused (run the server with sharing = \"client\" to send it its client's requests)"
	}
}

// rootsTarget is the client a roots/list is asked of: the one certain to
// be the cause (causingClient); else, on an instance whose clients share
// one directory, the client whose roots the upstream already holds, else
// the client attached longest. They are all of one shape and directory
// (docs/decisions/0056-client-shape.md), and the upstream can hold one set
// of roots only: it is told a real client's, never a union nor one made
// up. On a global instance, whose clients may be anywhere, it is refused
// unless certain; r.mu is held.
func (r *Router) rootsTarget() (*Client, string) {
	c, why := r.causingClient()
	if c != nil || r.opts.Mode != Shared || !r.opts.Directory {
		return c, why
	}
	if r.rootsFrom != nil && !r.rootsFrom.gone {
		return r.rootsFrom, ""
	}
	var first *Client
	for c := range r.clients {
		if first == nil || c.seq < first.seq {
			first = c
		}
	}
	if first == nil {
		return nil, why
	}
	return first, ""
}

// lacks names the capability a request needs that the client did not
// declare ("" when it has it, or the method needs none hearth knows of).
func (c *Client) lacks(method string) string {
	switch method {
	case "sampling/createMessage":
		if !c.caps.sampling {
			return "sampling"
		}
	case "elicitation/create":
		if !c.caps.elicitation {
			return "elicitation"
		}
	case "roots/list":
		if !c.caps.roots {
			return "roots"
		}
	}
	return ""
}

// upstreamNotification routes a notification of the upstream; r.mu is held.
func (r *Router) upstreamNotification(msg *jsonrpc.Message) {
	switch msg.Method {
	case "notifications/progress":
		p, ok := decodeObject(msg.Params)
		if !ok {
			return
		}
		var tok string
		if json.Unmarshal(p["progressToken"], &tok) != nil {
			return
		}
		pd := r.progress[tok]
		if pd == nil || pd.c == nil {
			return // a token hearth never gave, or of a request already answered
		}
		p["progressToken"] = pd.clientT
		pd.c.pushFor(jsonrpc.RawNotificationFrame(msg.Method, p.encode()), envelope.Key(pd.id))
	case "notifications/cancelled":
		// The upstream gave up a request it made of a client.
		p, ok := decodeObject(msg.Params)
		if !ok {
			return
		}
		k, ok := r.s2cUp[envelope.Key(p["requestId"])]
		if !ok {
			return
		}
		s := r.s2c[k]
		s.stop()
		delete(r.s2c, k)
		delete(r.s2cUp, envelope.Key(p["requestId"]))
		p["requestId"] = json.RawMessage(k)
		s.c.pushFor(jsonrpc.RawNotificationFrame(msg.Method, p.encode()), s.re)
	case "notifications/message":
		r.logMessage(msg)
	case "notifications/resources/updated":
		if r.era == eraModern {
			r.resourceUpdated(msg)
			return
		}
		if r.opts.Mode == Single {
			r.broadcast(msg)
			return
		}
		p, _ := decodeObject(msg.Params)
		for c := range r.subs[p.str("uri")] {
			c.push(jsonrpc.RawNotificationFrame(msg.Method, msg.Params))
		}
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		r.cacheGen++
		clear(r.cache)
		if r.era == eraModern {
			r.listChanged(msg)
			return
		}
		r.broadcast(msg)
	case "notifications/subscriptions/acknowledged":
		// An answer to hearth's own listen: clients had theirs from hearth.
	default:
		r.broadcast(msg)
	}
}

func (r *Router) broadcast(msg *jsonrpc.Message) {
	f := jsonrpc.RawNotificationFrame(msg.Method, msg.Params)
	for c := range r.clients {
		c.push(f)
	}
}

// logMessage sends a log message to the client it belongs to, when that is
// certain (the only client with a request in flight), else to every client;
// each gets it only if its own level lets it through; r.mu is held.
func (r *Router) logMessage(msg *jsonrpc.Message) {
	p, _ := decodeObject(msg.Params)
	lvl := levelOf(p.str("level"))
	f := jsonrpc.RawNotificationFrame(msg.Method, msg.Params)
	deliver := func(c *Client, re string) {
		if r.era == eraModern && !c.modern && c.level < 0 {
			return // it asked for no log: a modern upstream logs only for requests that set a level
		}
		if c.level < 0 || lvl < 0 || lvl >= c.level {
			c.pushFor(f, re)
		}
	}
	if r.opts.Mode == Shared {
		if c, _ := r.causingClient(); c != nil {
			deliver(c, c.aRequest()) // about its request: it goes with it
			return
		}
		for c := range r.clients {
			deliver(c, "") // whose it is is not certain: nobody's request
		}
		return
	}
	for c := range r.clients {
		deliver(c, c.aRequest())
	}
}
