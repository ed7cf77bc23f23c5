package route

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// Server-to-client requests: the upstream's own requests (sampling,
// elicitation, roots), each sent to the one client it is for when that is
// certain, else refused (decision 0035), under an id hearth gives it on
// the client's side; and the requests hearth makes of a client for a
// modern upstream's InputRequiredResult (mrtr.go).

// s2cTable holds the requests sent to clients and not yet answered (under
// Router.mu). Its ids, like the upstream's, are never reused.
type s2cTable struct {
	last int64
	byID map[string]*s2cReq // by the id hearth gave the client
	byUp map[string]string  // the upstream's id key -> the client's id key
}

// s2cReq is a request of the upstream (or of hearth, for a round) to one
// client.
type s2cReq struct {
	c      *Client
	upID   json.RawMessage // the upstream's id (nil: a round's request)
	method string
	// re labels its frames (Peer): the client's request it went with.
	re string
	// timer ends it when the client does not answer (AnswerTimeout); nil
	// for a round's request.
	timer *time.Timer
	// Set: a request hearth made of the client for a modern upstream's
	// InputRequiredResult; the answer goes to the round, under key.
	round *inputRound
	key   string
	// held is the frame, until the client is initialized and it is sent
	// (releaseHeld); seq orders such frames.
	held []byte
	seq  int64
	// call is set for a 2025 upstream's request of a 2026-07-28 client:
	// the call it waits in, parked for the client's input (bridge.go),
	// with its params and its input key.
	call   *pend
	params json.RawMessage
}

func newS2CTable() s2cTable {
	return s2cTable{byID: map[string]*s2cReq{}, byUp: map[string]string{}}
}

// add records s under a new id of hearth's, returning its text and key.
func (t *s2cTable) add(s *s2cReq) ([]byte, string) {
	t.last++
	s.seq = t.last
	id := strconv.AppendInt(nil, t.last, 10)
	k := envelope.Key(id)
	t.byID[k] = s
	if s.upID != nil {
		t.byUp[envelope.Key(s.upID)] = k
	}
	return id, k
}

// get is the request under the client's id key k (nil: none).
func (t *s2cTable) get(k string) *s2cReq { return t.byID[k] }

// forUp is the client's id key of the upstream's request under upstream
// id key up.
func (t *s2cTable) forUp(up string) (string, bool) {
	k, ok := t.byUp[up]
	return k, ok
}

// take removes the request under k (answered, cancelled or given up) and
// stops its timer; nil when there is none.
func (t *s2cTable) take(k string) *s2cReq {
	s := t.byID[k]
	if s == nil {
		return nil
	}
	delete(t.byID, k)
	if s.upID != nil {
		delete(t.byUp, envelope.Key(s.upID))
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	return s
}

// of lists the keys of the requests sent to c.
func (t *s2cTable) of(c *Client) []string {
	var out []string
	for k, s := range t.byID {
		if s.c == c {
			out = append(out, k)
		}
	}
	return out
}

// heldFor takes the frames held for c until it is initialized, in the
// order the upstream sent them.
func (t *s2cTable) heldFor(c *Client) []*s2cReq {
	var held []*s2cReq
	for _, s := range t.byID {
		if s.c == c && s.held != nil {
			held = append(held, s)
		}
	}
	slices.SortFunc(held, func(a, b *s2cReq) int { return cmp.Compare(a.seq, b.seq) })
	return held
}

// clear forgets every request (their upstream is gone: the answers have
// nowhere to go).
func (t *s2cTable) clear() {
	for _, s := range t.byID {
		if s.timer != nil {
			s.timer.Stop()
		}
	}
	clear(t.byID)
	clear(t.byUp)
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
	if r.askParked(msg) {
		return // a parked call's: asked in its next round (bridge.go)
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
	if missing := target.session.lacks(msg.Method); missing != "" {
		r.sendUp(jsonrpc.ResponseFrame(jsonrpc.RawID(id), nil, rpcError(jsonrpc.CodeMethodNotFound,
			"the client this "+msg.Method+" is for did not declare the "+missing+" capability")))
		return
	}
	if r.bridged(target) {
		r.bridgeAsk(target, msg) // asked in an InputRequiredResult (bridge.go)
		return
	}
	s := &s2cReq{c: target, upID: append(json.RawMessage(nil), id...), re: target.aRequest(), method: msg.Method}
	cid, k := r.s2c.add(s)
	s.timer = time.AfterFunc(r.opts.AnswerTimeout, func() { r.unanswered(k, s) })
	frame := jsonrpc.RequestFrame(jsonrpc.RawID(cid), msg.Method, msg.Params)
	if !target.session.initialized {
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
// it was initialized (upstreamRequest), in the order they came (to a
// 2026-07-28 client of a 2025 upstream, none: refused, bridge.go); r.mu is
// held.
func (c *Client) releaseHeld() {
	if c.r.bridged(c) {
		c.r.refuseHeld(c)
		return
	}
	for _, s := range c.r.s2c.heldFor(c) {
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
	if r.s2c.get(k) != s {
		return // answered, cancelled, or its client or upstream gone meanwhile
	}
	r.s2c.take(k)
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

// upstreamCancelled: the upstream gave up a request it made of a client;
// the client is told, under the id it knows; r.mu is held.
func (r *Router) upstreamCancelled(msg *jsonrpc.Message) {
	doc := msg.ParamsDoc()
	if doc == nil || doc.Root().Kind() != jsonval.Object {
		return
	}
	k, ok := r.s2c.forUp(envelope.Key(rawMember(doc, doc.Root(), "requestId")))
	if !ok {
		return
	}
	s := r.s2c.take(k)
	if s.call != nil {
		return // asked in an InputRequiredResult: an answer to it is ignored (bridge.go)
	}
	params := writeObject(doc, doc.Root(), []member{{"requestId", json.RawMessage(k)}}, nil)
	s.c.pushFor(jsonrpc.RawNotificationFrame(msg.Method, params), s.re)
}

// response routes a client's answer to a request the upstream (or hearth,
// for a round) made of it; r.mu is held.
func (c *Client) response(msg *jsonrpc.Message) {
	r := c.r
	k := envelope.Key(msg.ID.Raw())
	if s := r.s2c.get(k); s == nil || s.c != c || s.call != nil {
		return // not a request hearth sent it (or its upstream is gone); a parked call's is answered in its retry
	}
	s := r.s2c.take(k)
	if s.round != nil {
		r.inputAnswered(s, msg)
		return
	}
	if s.method == "roots/list" && msg.Error == nil {
		r.clients.rootsFrom = c // the upstream now holds its roots
	}
	r.sendUp(jsonrpc.ResponseFrame(jsonrpc.RawID(s.upID), msg.Result, msg.Error))
}

// givenUp answers the upstream's requests of a client that went away with
// an error, and forgets hearth's own (a round's request was the client's:
// it is cancelled with it); r.mu is held.
func (r *Router) givenUp(c *Client) {
	for _, k := range r.s2c.of(c) {
		if s := r.s2c.get(k); s.call != nil {
			continue // a parked call's: its retry may come from another connection (bridge.go)
		}
		s := r.s2c.take(k)
		if s.round != nil {
			continue
		}
		r.sendUp(jsonrpc.ResponseFrame(jsonrpc.RawID(s.upID), nil, rpcError(jsonrpc.CodeInternalError, "the client this request was sent to went away")))
	}
}

// causingClient is the client a server-to-client request is for when that
// is certain: the single client of a client instance, or on a shared one
// the only client with a request in flight, else, with none in flight,
// the only client attached (the upstream serves nobody else). Otherwise it
// says why not; r.mu is held.
func (r *Router) causingClient() (*Client, string) {
	if r.opts.Mode == Single || r.clients.len() == 1 {
		if c := r.clients.any(); c != nil {
			return c, ""
		}
		return nil, "hearth: no client is attached to " + r.opts.Name
	}
	only, n := r.clients.withRequests()
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
	if from := r.clients.rootsFrom; from != nil && !from.gone {
		return from, ""
	}
	if first := r.clients.oldest(); first != nil {
		return first, ""
	}
	return nil, why
}
