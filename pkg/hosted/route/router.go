// Package route is the router of one hosted MCP server instance: the only
// code that rewrites what passes between the instance's clients and its one
// upstream process (docs/architecture.md, "Hosted servers"). It knows
// nothing of sockets, shims or processes: client sessions hand it the
// frames they read and get theirs back through a write function; the
// instance hands it the upstream's lines and a way to send to it.
//
// What it keeps true on a shared instance (docs/protocol.md, "Hosted
// servers"): each client's request ids come back exactly as sent, whatever
// other clients use; progress, cancellations and server-to-client requests
// reach only the client they belong to, or are refused when that is not
// certain (never guessed); resource subscriptions are counted per client;
// the upstream runs at the most verbose log level any client asked for and
// each client gets only what its own level lets through; the upstream's
// initialize is done once and its result given to every later client.
package route

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// Mode is how the instance is shared.
type Mode int

const (
	// Shared: any number of clients on one upstream (sharing global or
	// directory).
	Shared Mode = iota
	// Single: one client (sharing client): its initialize and every
	// server-to-client request pass through unchanged.
	Single
)

// Error codes the router answers with.
const (
	// CodeUpstream: the upstream failed (exited, never started, crash loop)
	// while the request was queued or in flight. The message names the
	// server and its log.
	CodeUpstream = -32010
	// CodeShared: a server-to-client request the router cannot route to one
	// client with certainty (the upstream gets this error).
	CodeShared = -32011
	// CodeUnanswered: a server-to-client request its client did not answer
	// within AnswerTimeout (the upstream gets this error). It is the code
	// the MCP SDKs give a request that timed out.
	CodeUnanswered = -32001
)

// DefaultAnswerTimeout is how long a client has to answer a request the
// upstream made of it (sampling, elicitation, roots): the MCP SDKs' own
// default request timeout. A request nobody answers would otherwise hold
// the call that made it, and on a shared instance refuse every other
// client's sampling (decision 0035), for as long as the client stays.
const DefaultAnswerTimeout = 60 * time.Second

// Options configure a router.
type Options struct {
	Name    string // the server's name, in every error message
	LogPath string // its stderr log, named in errors
	Mode    Mode
	// Directory: the instance is shared by clients in one directory
	// (sharing directory), so a roots/list whose client is not certain is
	// asked of the client whose roots the upstream holds (rootsTarget).
	Directory bool
	// The router calls these with its lock held: they must not block or
	// call the router back.
	//
	// Wake asks for an upstream: the router has requests waiting and no
	// ready upstream. The instance answers with Up or Down.
	Wake func()
	// Ready: the upstream answered initialize, or server/discover when
	// modern (it speaks 2026-07-28).
	Ready func(modern bool)
	// Trouble: the upstream must be stopped (it refused initialize, or let
	// more than UpstreamLimit bytes pile up on its stdin).
	Trouble func(error)
	// ClientLimit bounds the bytes queued to one client before it is given
	// up (default 64 MiB); UpstreamLimit those queued to the upstream.
	ClientLimit, UpstreamLimit int
	// AnswerTimeout bounds the wait for a client's answer to a request the
	// upstream made of it (0: DefaultAnswerTimeout).
	AnswerTimeout time.Duration
	// ParkFor bounds how long an adopted router keeps what the clients
	// detached by the previous daemon's drain held, for their return
	// (resume.go; 0: DefaultParkFor).
	ParkFor time.Duration
	// Record, when set on a shared router, is given what each started
	// upstream lists, once it has fetched every page (Catalog); it is
	// called with the lock held and must not block.
	Record func(Catalog)
}

// The upstream's states.
const (
	down     = iota // no upstream process
	starting        // an upstream runs; its initialize is not answered yet
	ready
)

// Router routes one instance's frames.
type Router struct {
	opts Options

	mu      sync.Mutex
	state   int
	up      *outbox // to the upstream (nil: none)
	failure error   // set: the instance failed, requests are answered with it
	nextID  int64   // ids hearth gives requests to the upstream, never reused
	nextS2C int64   // ids hearth gives requests to clients
	nextTok int64   // progress tokens hearth gives the upstream

	clients map[*Client]struct{}
	// attached counts the clients ever attached, each one's seq: the
	// lowest seq attached came first.
	attached uint64
	// rootsFrom is the client whose answer to roots/list the upstream
	// holds (nil: none attached answered one).
	rootsFrom *Client

	// initParams are what the upstream's initialize is sent with (from the
	// first client's initialize); initResult is its result, given to every
	// later client.
	initParams json.RawMessage
	initResult json.RawMessage
	initID     string   // the upstream id of the initialize in flight
	initWait   []waiter // clients whose initialize waits for the upstream's
	queued     []queuedReq
	upCaps     upstreamCaps

	pending  map[string]*pend   // by upstream id key
	progress map[string]*pend   // by the progress token hearth gave the upstream
	s2c      map[string]*s2cReq // server-to-client requests, by the id hearth gave the client
	s2cUp    map[string]string  // upstream id key of a server-to-client request -> s2c key
	subs     map[string]map[*Client]struct{}
	upLevel  int // the level the upstream was last set to (-1: never)
	// What clients detached by a drain held, kept for when they attach
	// again (resume.go): parked by client tag, and held, the resource URIs
	// the upstream stays subscribed to for no attached client.
	parked map[string]parkedClient
	held   map[string]int
	// release lets go of parked and held once ParkFor has passed since
	// Adopt (releaseParked).
	release *time.Timer
	// settling counts the clients waiting to have nothing pending
	// (WhenSettled, settle.go).
	settling int

	cache    map[string]json.RawMessage // list results, by method and params
	cacheGen int                        // bumped by every list_changed

	// The upstream's era (decision 0038), learned anew for each upstream
	// process. discover is a modern upstream's DiscoverResult, refusal its
	// answer to initialize (quoted if the probe fails too).
	era      int
	discover json.RawMessage
	refusal  json.RawMessage
	// hearth's subscriptions/listen requests to a modern upstream: one for
	// list changes, one per resource URI a client subscribed to (by upstream
	// id key; "" and absent: none open).
	listListen string
	uriListens map[string]string

	// claimed are the outboxes the lock's holder queued the first frame
	// to: it writes them once it has released the lock (unlock).
	claimed []*outbox

	// cat is the catalog answered from while no upstream is ready
	// (catalog.go).
	cat catalogState
}

// unlock releases r.mu and then writes what the holder queued to peers
// that were idle (outbox). Every release of r.mu goes through it: a frame
// queued under the lock is written by the goroutine that queued it, with
// the lock released, so the router never waits on a peer.
func (r *Router) unlock() {
	// Copied out (onto the stack, for the usual one or two) so that the
	// list's array is reused by the next holder.
	var buf [4]*outbox
	claimed := append(buf[:0], r.claimed...)
	clear(r.claimed)
	r.claimed = r.claimed[:0]
	var settled []func()
	if r.settling > 0 {
		settled = r.settledLocked()
	}
	r.mu.Unlock()
	for _, o := range claimed {
		o.drain()
	}
	for _, f := range settled {
		f() // after the outboxes: the last reply is written first
	}
}

type waiter struct {
	c  *Client
	id json.RawMessage
}

// queuedReq is a client request held until the upstream is ready.
type queuedReq struct {
	c      *Client
	msg    *jsonrpc.Message
	params json.RawMessage
}

// pend is a request sent to the upstream and not yet answered.
type pend struct {
	c        *Client         // nil: hearth's own request
	id       json.RawMessage // the client's id, exactly as it sent it
	clientK  string
	method   string
	token    string          // the progress token hearth gave the upstream
	clientT  json.RawMessage // the client's own progress token
	cacheKey string
	cacheGen int
	uri      string                               // a resources/subscribe's URI (shared instances)
	internal func(result, errObj json.RawMessage) // hearth's own request
	// A legacy client's request to a modern upstream (translated): what was
	// sent, to retry it with inputResponses, and its input round if the
	// upstream asked for input (decision 0038).
	translated bool
	sent       json.RawMessage
	round      *inputRound
	rounds     int
}

// s2cReq is a request of the upstream to one client.
type s2cReq struct {
	c      *Client
	upID   json.RawMessage
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
}

// stop stops its timer, if any, once it is answered or given up.
func (s *s2cReq) stop() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

type upstreamCaps struct {
	toolsChanged, promptsChanged, resourcesChanged bool
	resourcesSubscribe                             bool
}

// New returns a router with no upstream and no client.
func New(opts Options) *Router {
	if opts.ClientLimit <= 0 {
		opts.ClientLimit = 64 << 20
	}
	if opts.Wake == nil {
		opts.Wake = func() {}
	}
	if opts.ParkFor <= 0 {
		opts.ParkFor = DefaultParkFor
	}
	if opts.AnswerTimeout <= 0 {
		opts.AnswerTimeout = DefaultAnswerTimeout
	}
	if opts.UpstreamLimit <= 0 {
		opts.UpstreamLimit = 64 << 20
	}
	if opts.Ready == nil {
		opts.Ready = func(bool) {}
	}
	if opts.Trouble == nil {
		opts.Trouble = func(error) {}
	}
	return &Router{
		opts: opts, clients: map[*Client]struct{}{},
		pending: map[string]*pend{}, progress: map[string]*pend{},
		s2c: map[string]*s2cReq{}, s2cUp: map[string]string{},
		subs: map[string]map[*Client]struct{}{}, upLevel: -1, parked: map[string]parkedClient{}, held: map[string]int{},
		cache: map[string]json.RawMessage{}, uriListens: map[string]string{},
	}
}

// Clients is how many clients are attached.
func (r *Router) Clients() int {
	r.mu.Lock()
	defer r.unlock()
	return len(r.clients)
}

// Busy reports whether any request is queued or in flight.
func (r *Router) Busy() bool {
	r.mu.Lock()
	defer r.unlock()
	n := len(r.pending)
	for _, p := range r.pending {
		if p.method == "subscriptions/listen" && p.internal != nil {
			n-- // hearth's own listen stays open while the upstream runs
		}
	}
	return n > 0 || len(r.queued) > 0 || len(r.initWait) > 0
}

// Up gives the router a new upstream process, written through peer: it
// sends the upstream its initialize (with the first client's parameters)
// and, once answered, the requests that waited.
func (r *Router) Up(peer Peer) {
	r.mu.Lock()
	defer r.unlock()
	if r.up != nil {
		r.up.close()
	}
	r.up = r.upstreamBox(peer)
	r.state = starting
	r.failure = nil
	r.upLevel = -1
	r.era = eraUnknown
	if r.initParams == nil {
		return // nobody asked yet; the first initialize will
	}
	r.sendInitialize()
}

// upstreamBox is the outbox to a new upstream; r.mu is held.
func (r *Router) upstreamBox(peer Peer) *outbox {
	var box *outbox
	box = newOutbox(r.opts.UpstreamLimit, peer, func(err error) {
		if errors.Is(err, errOverflow) {
			r.mu.Lock()
			if r.up == box {
				r.opts.Trouble(fmt.Errorf("%s stopped reading its stdin", r.opts.Name))
			}
			r.unlock()
		}
		// A failed write: the upstream is gone, and its exit says so.
	})
	return box
}

// sendInitialize sends the upstream its initialize; r.mu is held.
func (r *Router) sendInitialize() {
	r.nextID++
	key := envelope.Key(strconv.AppendInt(nil, r.nextID, 10))
	r.initID = key
	r.pending[key] = &pend{method: "initialize", internal: r.initialized}
	r.sendUp(jsonrpc.RequestFrame(jsonrpc.RawID(strconv.AppendInt(nil, r.nextID, 10)), "initialize", r.initParams))
}

// initialized handles the upstream's answer to initialize; r.mu is held.
// A refusal is not the end: a 2026-07-28 server refuses initialize, so it
// is probed with server/discover (decision 0038).
func (r *Router) initialized(result, errObj json.RawMessage) {
	r.initID = ""
	if errObj != nil {
		r.refusal = errObj
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
	r.era = eraLegacy
	r.initResult, r.discover = result, nil
	r.upCaps = parseUpstreamCaps(result)
	r.sendUp(jsonrpc.RawNotificationFrame("notifications/initialized", nil))
	r.becomeReady()
}

// failStart answers the clients waiting for the upstream's start with
// errObj and has the upstream stopped (why); r.mu is held.
func (r *Router) failStart(errObj json.RawMessage, why error) {
	for _, w := range r.initWait {
		w.c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(w.id), nil, errObj))
	}
	r.initWait = nil
	r.opts.Trouble(why)
}

// becomeReady: the upstream's era is known and it serves; the clients
// waiting get their initialize answered, what the clients had open is
// opened again on a restarted upstream, and queued requests go; r.mu is
// held.
func (r *Router) becomeReady() {
	r.state = ready
	r.cat.seeded = false // the upstream's own answer from now on
	for _, w := range r.initWait {
		w.c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(w.id), r.initAnswer(w.c), nil))
	}
	r.initWait = nil
	if r.era == eraModern {
		r.openListens()
	} else {
		for uri := range r.subs {
			r.internalRequest("resources/subscribe", mustJSON(map[string]string{"uri": uri}))
		}
		if lvl := r.minLevel(); lvl >= 0 {
			r.upLevel = lvl
			r.internalRequest("logging/setLevel", mustJSON(map[string]string{"level": levelNames[lvl]}))
		}
	}
	queued := r.queued
	r.queued = nil
	for _, q := range queued {
		if q.c.gone {
			continue
		}
		r.forward(q.c, q.msg, q.params)
	}
	r.fetchCatalog()
	r.opts.Ready(r.era == eraModern)
}

// initAnswer is the initialize result a client gets: the legacy upstream's
// own, or one made from a modern upstream's DiscoverResult; r.mu is held.
func (r *Router) initAnswer(c *Client) json.RawMessage {
	if r.discover != nil {
		return legacyInitResult(r.discover, c.initParams, r.opts.Name)
	}
	return r.initResult
}

// Down tells the router its upstream is gone (why names the cause, with the
// server and its log). Every request in flight or queued is answered with
// the error at once; the next request asks for a new upstream (Wake).
// failed marks the instance failed: until Up, requests get the error
// without a new upstream being asked for.
func (r *Router) Down(why error, failed bool) {
	r.mu.Lock()
	defer r.unlock()
	r.state = down
	if r.up != nil {
		r.up.close()
		r.up = nil
	}
	if failed {
		r.failure = why
	}
	msg := rpcError(CodeUpstream, why.Error())
	for _, w := range r.initWait {
		w.c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(w.id), nil, msg))
	}
	r.initWait = nil
	for _, q := range r.queued {
		q.c.push(jsonrpc.ResponseFrame(q.msg.ID, nil, msg))
	}
	r.queued = nil
	for k, p := range r.pending {
		if p.c != nil && !p.c.gone {
			p.c.push(jsonrpc.ResponseFrame(jsonrpc.RawID(p.id), nil, msg))
			delete(p.c.inflight, p.clientK)
		}
		delete(r.pending, k)
	}
	clear(r.progress)
	// Requests the old upstream made of clients: their answers have nowhere
	// to go.
	for _, s := range r.s2c {
		s.stop()
	}
	clear(r.s2c)
	clear(r.s2cUp)
	r.initID = ""
	r.listListen = ""
	clear(r.uriListens)
	clear(r.held) // a new upstream process is subscribed to nothing
	r.cacheGen++
	clear(r.cache)
}

// ErrNotJSONRPC: a line of the upstream's stdout is not a JSON-RPC message.
var ErrNotJSONRPC = errors.New("not a JSON-RPC message")

// FromUpstream routes one line the upstream wrote. A line that is not
// JSON-RPC (a server printing to stdout) is not routed: the error says so,
// and the instance decides what that means. A line that answers a request
// in flight but is no valid response (an error that is no JSON-RPC error
// object, neither or both of result and error) is not passed on either: the
// request is answered with an error saying so, and the returned error
// (ErrInvalidResponse) is for the instance's log.
func (r *Router) FromUpstream(line []byte) error {
	if msg, ok := jsonrpc.ParseResponse(line); ok {
		// A reply is passed on as it is, under its client's id: its
		// envelope is all that is read (decision 0011).
		r.mu.Lock()
		defer r.unlock()
		if r.up == nil {
			return nil
		}
		return r.upstreamResponse(msg)
	}
	msg, perr := jsonrpc.Parse(line)
	if perr != nil {
		r.mu.Lock()
		defer r.unlock()
		e := envelope.ScanHead(line)
		if e.FirstID != nil {
			// Two ids: whichever request it meant, it is no answer to
			// either. Each request in flight it names is answered at once
			// with an error rather than left to its timeout.
			return r.answerRepeatedID(e, line)
		}
		if k, ok := r.answering(e); ok {
			why := perr.Err.Message
			switch {
			case e.HasResult && e.HasError:
				why = "it has both result and error"
			case !e.HasResult && !e.HasError:
				why = "it has neither result nor error"
			}
			return r.answerInvalid(k, why+": "+shortText(line))
		}
		return ErrNotJSONRPC
	}
	r.mu.Lock()
	defer r.unlock()
	if r.up == nil {
		return nil
	}
	switch msg.Kind {
	case jsonrpc.Response:
		return r.upstreamResponse(msg)
	case jsonrpc.Request:
		r.upstreamRequest(msg)
	case jsonrpc.Notification:
		r.upstreamNotification(msg)
	}
	return nil
}

// answerRepeatedID answers every request in flight that a frame writing
// its id twice names (the first id and the last) with an error saying so;
// r.mu is held. The frame is nobody's answer: JSON leaves a repeated
// name's meaning to the parser.
func (r *Router) answerRepeatedID(e envelope.Envelope, line []byte) error {
	why := fmt.Sprintf("it writes its id twice (%s and %s): %s", shortText(e.FirstID), shortText(e.ID), shortText(line))
	var err error
	for _, id := range [][]byte{e.FirstID, e.ID} {
		e.ID = id
		if k, ok := r.answering(e); ok {
			err = r.answerInvalid(k, why)
		}
	}
	if err == nil {
		return fmt.Errorf("%w: %s", ErrInvalidResponse, why)
	}
	return err
}

// answering says which request in flight a frame of the upstream that
// could not be routed as it is answers, going by its envelope: it has an
// id that is one of a request in flight and no method member (a frame with
// a method is a request or notification of the upstream's own, whose id is
// in the upstream's id space, not hearth's); r.mu is held.
func (r *Router) answering(e envelope.Envelope) (string, bool) {
	if r.up == nil || e.ID == nil || e.HasMethod() {
		return "", false
	}
	k := envelope.Key(e.ID)
	_, ok := r.pending[k]
	return k, ok
}

// TooLarge is told of a line of the upstream's stdout longer than limit
// bytes, which the instance dropped; head is the line's first bytes. When
// the head shows the line is a response (a result or error member) to a
// request in flight, and its id comes before that member, as JSON-RPC
// libraries write it, the request is answered with an error naming the
// limit; otherwise the request, if any, stays in flight (until the client
// cancels it or the upstream exits). The error returned says which it was,
// for the instance's log.
func (r *Router) TooLarge(head []byte, limit int) error {
	e := envelope.ScanHead(head)
	r.mu.Lock()
	defer r.unlock()
	size := humanBytes(limit)
	if k, ok := r.answering(e); ok && (e.HasResult || e.HasError) {
		method := r.pending[k].method
		r.settle(k, nil, rpcError(jsonrpc.CodeInternalError,
			r.opts.Name+"'s reply to "+method+" was larger than hearth's "+size+" limit for one line of a hosted server's output, so it was dropped"))
		return fmt.Errorf("a line of stdout over %s was dropped: the reply to %s, answered to its client with an error", size, method)
	}
	return fmt.Errorf("a line of stdout over %s was dropped (no request in flight could be read from its start: %s)", size, shortText(head))
}

// humanBytes words a size: "64 MiB", or bytes when it is no whole number
// of MiB or KiB.
func humanBytes(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// ClearFailure lets the next request ask for an upstream again after the
// instance was marked failed (a restart by hand).
func (r *Router) ClearFailure() {
	r.mu.Lock()
	r.failure = nil
	r.unlock()
}

// ProtocolVersion is the version the upstream answered initialize with (""
// before it has).
func (r *Router) ProtocolVersion() string {
	r.mu.Lock()
	defer r.unlock()
	if r.discover != nil {
		return modernVersion
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(r.initResult, &res)
	return res.ProtocolVersion
}

// internalRequest sends a request of hearth's own whose answer is dropped;
// r.mu is held.
func (r *Router) internalRequest(method string, params json.RawMessage) {
	if r.up == nil {
		return
	}
	r.nextID++
	id := strconv.AppendInt(nil, r.nextID, 10)
	r.pending[envelope.Key(id)] = &pend{method: method, internal: func(json.RawMessage, json.RawMessage) {}}
	r.sendUp(jsonrpc.RequestFrame(jsonrpc.RawID(id), method, params))
}

// UpstreamError words a failure for a client: it names the server and
// where its log is.
func (r *Router) UpstreamError(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if r.opts.LogPath != "" {
		msg += " (its log: " + r.opts.LogPath + ")"
	}
	return errors.New(msg)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func errorMessage(errObj json.RawMessage) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(errObj, &e) != nil || e.Message == "" {
		return string(errObj)
	}
	return e.Message
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

// Log levels (RFC 5424 order, most verbose first).
var levelNames = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func levelOf(name string) int {
	for i, n := range levelNames {
		if n == name {
			return i
		}
	}
	return -1
}

// minLevel is the most verbose level any client asked for (-1: none asked);
// r.mu is held.
func (r *Router) minLevel() int {
	m := -1
	for c := range r.clients {
		if c.level >= 0 && (m < 0 || c.level < m) {
			m = c.level
		}
	}
	for _, p := range r.parked {
		if p.level >= 0 && (m < 0 || p.level < m) {
			m = p.level
		}
	}
	return m
}
