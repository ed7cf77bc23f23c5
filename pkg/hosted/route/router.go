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
	"errors"
	"fmt"
	"sync"
	"time"
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

// Router routes one instance's frames. Its state is in named parts, each
// with its file, all under mu (docs/architecture.md, "The router in
// parts").
type Router struct {
	opts Options
	mu   routerLock

	link    link          // the upstream: its state, outbox, level, what waits for it (link.go)
	era     eraState      // what the upstream is: its era, handshake and answer (era.go)
	flight  inflight      // the requests in flight upstream, by hearth's ids and tokens (inflight.go)
	s2c     s2cTable      // the requests sent to clients (s2c.go)
	clients clientSet     // the clients attached (clients.go)
	subs    subscriptions // who is subscribed to what (subs.go)
	parked  parking       // what clients a drain detached held (resume.go)
	lists   listCache     // the running upstream's list answers (lists.go)
	cat     catalogState  // the catalog answered from while no upstream is ready (catalog.go)
	bridge  bridgeState   // a 2026-07-28 client of a 2025 upstream: its parked calls, its requestStates' key (bridge.go)
}

// routerLock is the router's one lock, and the outboxes its holder queued
// a first frame to (claimed): the holder writes them once it has released
// the lock (unlock).
type routerLock struct {
	sync.Mutex
	claimed []*outbox
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
		opts: opts, link: newLink(), era: newEraState(), flight: newInflight(), s2c: newS2CTable(),
		clients: newClientSet(), subs: newSubscriptions(), parked: parking{clients: map[string]parkedClient{}},
		lists: newListCache(), bridge: newBridgeState(),
	}
}

// unlock releases r.mu and then writes what the holder queued to peers
// that were idle (outbox). Every release of r.mu goes through it: a frame
// queued under the lock is written by the goroutine that queued it, with
// the lock released, so the router never waits on a peer.
func (r *Router) unlock() {
	// Copied out (onto the stack, for the usual one or two) so that the
	// list's array is reused by the next holder.
	var buf [4]*outbox
	claimed := append(buf[:0], r.mu.claimed...)
	clear(r.mu.claimed)
	r.mu.claimed = r.mu.claimed[:0]
	var settled []func()
	if r.clients.settling > 0 {
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

// Clients is how many clients are attached.
func (r *Router) Clients() int {
	r.mu.Lock()
	defer r.unlock()
	return r.clients.len()
}

// Busy reports whether any request is queued or in flight.
func (r *Router) Busy() bool {
	r.mu.Lock()
	defer r.unlock()
	return r.flight.busy() > 0 || len(r.link.queued) > 0 || len(r.link.waiting) > 0
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
