package route

import (
	"encoding/json"
	"strconv"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// Client is one client connection attached to a router.
type Client struct {
	r   *Router
	out *outbox
	// Under r.mu.
	gone     bool
	seq      uint64            // its place in the order clients attached
	tag      string            // who it is across daemons ("": nobody known; resume.go)
	settled  func()            // WhenSettled's, until called
	inflight map[string]string // its request id key -> upstream id key
	session  clientSession
	subs     clientSubs
	said     said // who it says it is (identity.go)
}

// clientSession is what a client declared of itself, and set on its
// session (under r.mu).
type clientSession struct {
	// inited: it sent initialize. modern: it sent a request with
	// 2026-07-28 _meta and no initialize; it hears of list changes only
	// through its own listens. initialized: it sent
	// notifications/initialized (or speaks 2026-07-28 throughout), so the
	// upstream's requests may reach it.
	inited, modern, initialized bool
	caps                        clientCaps
	// initParams are its initialize's params (its capabilities and
	// clientInfo, sent in _meta on its behalf to a modern upstream).
	initParams json.RawMessage
	// meta are the members of its modern _meta, made from initParams and
	// level (withModernMeta); nil: to be made again.
	meta  []member
	level int // the log level it asked for (-1: none)
}

type clientCaps struct{ sampling, elicitation, roots bool }

// lacks names the capability a request of the upstream's needs that the
// client did not declare ("" when it has it, or the method needs none
// hearth knows of).
func (s *clientSession) lacks(method string) string {
	switch method {
	case "sampling/createMessage":
		if !s.caps.sampling {
			return "sampling"
		}
	case "elicitation/create":
		if !s.caps.elicitation {
			return "elicitation"
		}
	case "roots/list":
		if !s.caps.roots {
			return "roots"
		}
	}
	return ""
}

// capabilities is the capabilities member of its initialize's params.
func (s *clientSession) capabilities() json.RawMessage {
	p, _ := decodeObject(s.initParams)
	return p["capabilities"]
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

// capsOfMeta are the capabilities a modern request's _meta declares.
func capsOfMeta(q *request) clientCaps {
	n := q.doc.Get(q.meta, metaCapabilities)
	if n == nil || n.Kind() != jsonval.Object {
		return clientCaps{}
	}
	has := func(k string) bool { return q.doc.Get(n, k) != nil }
	return clientCaps{sampling: has("sampling"), elicitation: has("elicitation"), roots: has("roots")}
}

// Attach adds a client, whose frames go to peer. gone is called once if the
// client is given up (its writes fail, or it stopped reading).
func (r *Router) Attach(peer Peer, gone func(error)) *Client {
	c := &Client{r: r, inflight: map[string]string{}, session: clientSession{level: -1},
		subs: clientSubs{uris: map[string]bool{}, listens: map[string]*clientListen{}}}
	c.out = newOutbox(r.opts.ClientLimit, peer, func(err error) {
		c.Detach()
		if gone != nil {
			gone(err)
		}
	})
	r.mu.Lock()
	r.clients.add(c)
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
func (c *Client) pendingLocked() int { return len(c.inflight) + c.r.link.pendingOf(c) }

// push queues a frame to the client that belongs to none of its requests
// in particular (replies are labelled by the id they carry); r.mu is held.
func (c *Client) push(frame []byte) { c.pushFor(frame, "") }

// pushFor queues a frame to the client that belongs to its request with
// key re (Peer); r.mu is held.
func (c *Client) pushFor(frame []byte, re string) {
	if !c.gone && c.out.push(frame, re) {
		c.r.mu.claimed = append(c.r.mu.claimed, c.out)
	}
}

func (c *Client) answer(id jsonrpc.ID, result json.RawMessage) {
	c.push(jsonrpc.ResponseFrame(id, result, nil))
}

func (c *Client) fail(id jsonrpc.ID, code int, message string) {
	c.push(jsonrpc.ResponseFrame(id, nil, rpcError(code, message)))
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
		p := c.r.flight.get(upKey)
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
		p := r.flight.get(upKey)
		if p == nil {
			continue
		}
		c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(p.id), nil, msg))
		r.abandon(upKey, p, reason)
	}
	initIDs, queued := r.link.takeOf(c)
	for _, q := range queued {
		c.push(jsonrpc.ResponseFrame(q.msg.ID, nil, msg))
	}
	for _, id := range initIDs {
		c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(id), nil, msg))
	}
}

// abandon gives up a request in flight upstream for its client: its answer
// and progress are dropped, and the upstream is told to cancel it (a round
// of an input-required exchange was answered already: nothing to cancel);
// r.mu is held.
func (r *Router) abandon(upKey string, p *pend, reason string) {
	p.c = nil
	p.internal = func(json.RawMessage, json.RawMessage) {}
	r.flight.dropToken(p)
	if p.input.round != nil {
		r.dropRound(upKey, p)
		return
	}
	if r.link.out != nil {
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
	r.clients.remove(c)
	c.gone = true
	c.out.close()
	for _, upKey := range c.inflight {
		if p := r.flight.get(upKey); p != nil {
			r.abandon(upKey, p, "the client went away")
		}
	}
	if park {
		r.park(c)
	}
	for uri := range c.subs.uris {
		r.unsubscribe(c, uri)
	}
	r.givenUp(c)
	if len(c.subs.listens) > 0 {
		clear(c.subs.listens)
		r.syncURIListens()
	}
	r.link.dropWaiting(c)
	r.relaxLevel()
}

// clientSet is the clients attached to the router (under Router.mu): each
// with its place in the order they attached, the one whose roots the
// upstream holds, and how many wait to be settled (settle.go).
type clientSet struct {
	set map[*Client]struct{}
	// attached counts the clients ever attached, each one's seq: the
	// lowest seq attached came first.
	attached uint64
	// rootsFrom is the client whose answer to roots/list the upstream
	// holds (nil: none attached answered one).
	rootsFrom *Client
	// settling counts the clients waiting to have nothing pending
	// (WhenSettled).
	settling int
}

func newClientSet() clientSet { return clientSet{set: map[*Client]struct{}{}} }

// add attaches c, last in the order.
func (s *clientSet) add(c *Client) {
	s.attached++
	c.seq = s.attached
	s.set[c] = struct{}{}
}

// remove detaches c.
func (s *clientSet) remove(c *Client) {
	delete(s.set, c)
	if s.rootsFrom == c {
		s.rootsFrom = nil
	}
	if c.settled != nil {
		c.settled = nil // it never settles now
		s.settling--
	}
}

func (s *clientSet) len() int { return len(s.set) }

// any is one client attached (nil: none).
func (s *clientSet) any() *Client {
	for c := range s.set {
		return c
	}
	return nil
}

// oldest is the client attached longest (nil: none).
func (s *clientSet) oldest() *Client {
	var first *Client
	for c := range s.set {
		if first == nil || c.seq < first.seq {
			first = c
		}
	}
	return first
}

// withRequests counts the clients with a request in flight upstream, and
// gives one of them.
func (s *clientSet) withRequests() (one *Client, n int) {
	for c := range s.set {
		if len(c.inflight) > 0 {
			one = c
			n++
		}
	}
	return one, n
}

// minLevel is the most verbose log level any attached client asked for
// (-1: none asked).
func (s *clientSet) minLevel() int {
	m := -1
	for c := range s.set {
		m = moreVerbose(m, c.session.level)
	}
	return m
}

// moreVerbose is the more verbose of two levels (-1: none).
func moreVerbose(a, b int) int {
	if b >= 0 && (a < 0 || b < a) {
		return b
	}
	return a
}
