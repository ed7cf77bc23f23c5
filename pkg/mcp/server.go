// Package mcp serves the Model Context Protocol over one NDJSON connection at a
// time: a [Server] holds what all connections share (the tool registry,
// counters, per-tool statistics, the sessions connected now) and Serve runs
// one connection's session.
//
// A connection speaks one of two protocol eras, fixed by its first deciding
// request: initialize opens a legacy (2025) session; a request carrying the
// protocol version in _meta opens a modern (2026-07-28), stateless one,
// where each request's _meta is read on its own (era.go, subscribe.go).
//
// A connection that has sent initialize, or is modern, is served
// concurrently: the reader answers protocol methods (ping, tools/list,
// resources, logging/setLevel, server/discover, errors) at once, and each
// tools/call runs in its own goroutine, at most Options.MaxConcurrentCalls
// at a time, the rest waiting in arrival order; each reply is written when
// it is ready. A connection of neither (plain JSON-RPC methods) keeps one
// FIFO: requests run one at a time and replies, including those to
// malformed frames, leave in request order. Either way cancellations are
// read while calls run. See docs/protocol.md and decisions 0013 and 0016
// (docs/decisions).
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/config/keys"
	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/stats"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// Protocol versions this server speaks through initialize (the legacy era),
// newest first. An unknown version asked for in initialize is answered with
// the newest (the client then decides). ModernVersions are the stateless ones.
var ProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Defaults for Options.
const (
	DefaultQueueDepth = keys.DefaultQueueDepth
	// DefaultQueueBytes bounds the memory one connection's queued and
	// running requests hold (their decoded frames): 1 024 frames of 1 MiB
	// could otherwise pin gigabytes.
	DefaultQueueBytes = 256 << 20
	// DefaultMaxHeldBytes bounds the same across every connection: four
	// clients flooding 1 MiB frames without reading took 2 GB without it.
	DefaultMaxHeldBytes = keys.DefaultMaxHeldMB << 20
	DefaultPageSize     = 100
	DefaultDrainTimeout = keys.DefaultDrainTimeout
	// DefaultAbandonGrace is how long a session waits, after a call's deadline
	// or cancellation, for its handler to return before answering without it.
	// It covers the supervisor's SIGTERM grace, so a child is dead when the
	// client hears TOOL_TIMEOUT.
	DefaultAbandonGrace = 5 * time.Second
	// DefaultMaxConcurrentCalls is how many tool calls one initialized
	// connection runs at once.
	DefaultMaxConcurrentCalls = 16
)

// Options configure a Server.
type Options struct {
	Registry     *tool.Registry
	Name         string // serverInfo.name
	Version      string // serverInfo.version
	Instructions string
	Log          *zap.Logger
	// QueueDepth bounds the requests one connection may have queued, waiting
	// for a call slot or running; more are answered QUEUE_OVERLOADED (at
	// once, or in order on a FIFO connection). Zero: DefaultQueueDepth.
	QueueDepth int
	// MaxHeldBytes bounds, across every connection, the bytes pending
	// requests hold (jsonrpc.Message.Size) plus the lines still being read
	// beyond frame.FreeLine each: past it a request is answered
	// QUEUE_OVERLOADED, unless its connection has nothing pending (an idle
	// connection is always served). Zero: DefaultMaxHeldBytes.
	MaxHeldBytes int64
	// QueueBytes bounds the bytes (see jsonrpc.Message.Size) held by one
	// connection's queued and running requests; a request that would pass it
	// is answered QUEUE_OVERLOADED, unless nothing else is pending (a single
	// request of any size that fits a frame is always served). Zero:
	// DefaultQueueBytes.
	QueueBytes int64
	// PageSize is the number of tools per tools/list page. Zero: DefaultPageSize.
	PageSize int
	// DrainTimeout bounds how long a draining session lets running calls finish.
	DrainTimeout time.Duration
	// AbandonGrace: see DefaultAbandonGrace.
	AbandonGrace time.Duration
	// MaxConcurrentCalls bounds the tool calls one initialized connection
	// runs at once; more wait, in arrival order, for a slot (they count
	// against QueueDepth and QueueBytes meanwhile). Zero:
	// DefaultMaxConcurrentCalls.
	MaxConcurrentCalls int
	// Home is the daemon's data directory. A shim whose $/hearth/hello names
	// another one gets every later request but ping refused (-32000). Empty:
	// not checked.
	Home string
	// Host attaches a connection whose shim asks for a hosted server
	// and returns its dispatcher (dispatcher.go). Nil: such connections
	// are refused.
	Host HostFunc
	// Control answers hearth's own control requests by method
	// ($/hearth/servers: hearthd servers), on a connection to the socket
	// that is no shim's only (control.go); elsewhere such a method is not
	// found. Tools are for MCP clients and their models; these are for the
	// user's command line.
	Control map[string]ControlFunc
}

// Server is shared by every connection of a daemon.
type Server struct {
	opts Options
	log  *zap.Logger

	requests atomic.Uint64
	errors   atomic.Uint64
	panics   atomic.Uint64
	sessions atomic.Int64
	total    atomic.Uint64

	// held is the daemon-wide budget (Options.MaxHeldBytes) that pending
	// requests' decoded frames and lines still being read draw on.
	held      *frame.Budget
	overloads atomic.Uint64 // requests refused by the daemon-wide bound

	statsMu sync.Mutex
	tools   map[string]*toolStats

	liveMu sync.Mutex
	live   map[*session]struct{}

	infoOnce sync.Once
	info     []byte // serverInfoJSON
}

type toolStats struct {
	calls, errors atomic.Uint64
	latency       stats.Histogram
}

// New returns a Server. It does not check the registry; the daemon refuses to
// start with zero tools before it accepts anyone.
func New(opts Options) *Server {
	if opts.QueueDepth <= 0 {
		opts.QueueDepth = DefaultQueueDepth
	}
	if opts.QueueBytes <= 0 {
		opts.QueueBytes = DefaultQueueBytes
	}
	if opts.MaxHeldBytes <= 0 {
		opts.MaxHeldBytes = DefaultMaxHeldBytes
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = DefaultDrainTimeout
	}
	if opts.AbandonGrace <= 0 {
		opts.AbandonGrace = DefaultAbandonGrace
	}
	if opts.MaxConcurrentCalls <= 0 {
		opts.MaxConcurrentCalls = DefaultMaxConcurrentCalls
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.Name == "" {
		opts.Name = "hearth"
	}
	return &Server{opts: opts, log: opts.Log, tools: map[string]*toolStats{}, live: map[*session]struct{}{}, held: frame.NewBudget(opts.MaxHeldBytes)}
}

// HeldBudget is the daemon-wide budget (Options.MaxHeldBytes) that pending
// requests and frames still being read draw on: a transport that reads a
// message whole before the session sees it (an HTTP body) draws on it too.
func (s *Server) HeldBudget() *frame.Budget { return s.held }

// Registry is the registry the server serves.
func (s *Server) Registry() *tool.Registry { return s.opts.Registry }

// Conn is one transport connection.
type Conn struct {
	Reader io.Reader
	Writer io.Writer
	// CloseRead interrupts a blocked Read when the session must drain (a socket's
	// read half, or stdin). Nil when the transport cannot.
	CloseRead func() error
	// Client is what the transport knows of the peer (its pid from SO_PEERCRED).
	Client tool.Client
	// Gone is closed by the transport's owner when the peer has gone away
	// completely (a hang-up on the socket). The session then cancels every
	// running and waiting call, writes nothing more, stops reading and
	// Serve returns. End of input alone is not that: a client that closed
	// its write half still gets every reply it is owed. Nil: never.
	Gone <-chan struct{}
	// Tracker, when set, hears of every frame the session takes in before
	// the frame has any effect. A shim that handed its client's stdio to
	// the daemon learns through it, should the daemon die, which requests
	// were in flight and which input was never taken in (pkg/handoff).
	Tracker Tracker
	// Source, when set, is where the session reads frames instead of
	// Reader: a transport that receives each message apart plugs in here.
	Source FrameSource
	// Sink, when set, is where the session writes frames instead of
	// Writer: a transport that routes each reply to the request it answers
	// (Streamable HTTP) plugs in here.
	Sink FrameSink
	// WriteReady, when set, reports whether a write of n bytes (a frame
	// and its newline) to the client would complete now, without waiting
	// for the client to read. A hosted session then writes a reply in the
	// goroutine that has it instead of handing it to another
	// (Writer.TryWrite); nil means it cannot tell, and every frame is
	// handed over.
	WriteReady func(n int) bool
	// Transport says how the client is connected, for ClientInfo:
	// "direct" (a shim handed over its client's stdio), "socket" or
	// "stdio". A socket connection whose shim said hello is a relay.
	Transport string
	// Shim says the peer reached the daemon over its own 0600 socket and
	// passed the peer check (the same user): a connection accepted there,
	// or the stdio a shim handed over through it. Only such a peer may
	// send hearth's internal methods ($/hearth/...), the shim's hello
	// among them, which may name a command to run. From any other
	// transport (Streamable HTTP, a stdio daemon's own client) they are
	// refused: what a connection may ask follows from how it arrived
	// (docs/threat-model.md).
	Shim bool
	// Run, when set, attaches the session to a hosted server from its
	// start, as a shim's hello asking for that server would: the
	// transport itself chose it (HTTP's /servers/NAME/mcp names a server
	// of the config file, never a command). It holds the hello's run
	// member (docs/protocol.md, "Hosted servers").
	Run json.RawMessage
}

// Tracker hears of each frame a session reads (Conn.Tracker).
type Tracker interface {
	// Took is called for each frame read, in order, before it has any
	// effect: kind, id, method and params are the parsed frame's (kind 0
	// when the line did not parse, or was discarded as too large or for
	// want of memory), line its text, and end the stream offset just past
	// it (frame.Reader.Offset). The parts, not the message: the tracker
	// lives beside the shim, which links no decoder (pkg/handoff).
	Took(kind jsonrpc.Kind, id jsonrpc.ID, method string, params []byte, line []byte, end int64)
}

// ErrWriteFailed reports that the peer stopped reading (broken pipe, closed
// socket). The session ended because nothing more could be delivered.
var ErrWriteFailed = errors.New("mcp: writing to the client failed")

// ErrClientGone reports that the session ended because Conn.Gone was
// closed. errors.Is(ErrClientGone, ErrWriteFailed) holds: both mean the
// client went away.
var ErrClientGone error = clientGoneError{}

type clientGoneError struct{}

func (clientGoneError) Error() string        { return "mcp: the client went away" }
func (clientGoneError) Is(target error) bool { return target == ErrWriteFailed }

// Serve runs one connection until its input ends, the peer is gone (a write
// failed or Conn.Gone closed), or ctx is cancelled. On end of input every
// request already read is answered. When the peer is gone every call is
// cancelled and Serve returns within the abandon grace. On ctx cancellation
// the session drains: it stops reading, answers queued and waiting requests
// with a shutting-down error, lets running calls finish within the drain
// timeout, then cancels them and returns once each is answered or abandoned.
func (s *Server) Serve(ctx context.Context, c Conn) error {
	s.sessions.Add(1)
	seq := s.total.Add(1)
	defer s.sessions.Add(-1)
	sess := newSession(s, c, seq)
	s.liveMu.Lock()
	s.live[sess] = struct{}{}
	s.liveMu.Unlock()
	defer func() {
		s.liveMu.Lock()
		delete(s.live, sess)
		s.liveMu.Unlock()
	}()
	return sess.run(ctx)
}

// ClientInfo describes one connected session (daemon_status, hearthd status).
type ClientInfo struct {
	// Name and Version are initialize's clientInfo, or on a modern
	// connection the latest request's; empty when neither said.
	Name    string `json:"name"`
	Version string `json:"version"`
	// ProtocolVersion is the MCP version negotiated, or a modern request's
	// ("" on a connection of neither era).
	ProtocolVersion string `json:"protocol_version"`
	// Cwd and PID come from the transport and the shim's $/hearth/hello.
	Cwd string `json:"cwd"`
	PID int    `json:"pid"`
	// ShimVersion is the hello's version ("" without a hello).
	ShimVersion string `json:"shim_version"`
	// Home is the data directory the shim resolved (hello's home; "" when
	// it did not say).
	Home string `json:"home"`
	// Transport is how the client is connected: "direct" (the shim handed
	// its client's stdio to the daemon), "relay" (the shim copies frames
	// over the socket), "socket" (a client on the socket itself) or
	// "stdio" (a stdio daemon's own client).
	Transport string `json:"transport"`
	// Since is when the connection was accepted, in UTC.
	Since time.Time `json:"since"`
	// Running counts the tool handlers running now; Waiting the calls
	// waiting for a slot.
	Running int `json:"running"`
	Waiting int `json:"waiting"`
	// Requests counts the requests read on this connection.
	Requests uint64 `json:"requests"`
	// Hosted names the hosted server the connection is attached to
	// (`hearth run`); "" for a connection to hearth's own tools. HostedKey
	// is that instance's key (hosted.Status.Key).
	Hosted    string `json:"hosted,omitempty"`
	HostedKey string `json:"hosted_key,omitempty"`
	// ShimPID is the pid of the shim a hosted client came through (PID is
	// its client's, from the shim's hello); 0 when none.
	ShimPID int `json:"shim_pid,omitempty"`
}

// Clients lists the sessions connected now, oldest first.
func (s *Server) Clients() []ClientInfo {
	s.liveMu.Lock()
	sessions := make([]*session, 0, len(s.live))
	for sess := range s.live {
		sessions = append(sessions, sess)
	}
	s.liveMu.Unlock()
	sort.Slice(sessions, func(i, j int) bool {
		a, b := sessions[i], sessions[j]
		if !a.since.Equal(b.since) {
			return a.since.Before(b.since)
		}
		return a.seq < b.seq
	})
	out := make([]ClientInfo, 0, len(sessions))
	for _, sess := range sessions {
		out = append(out, sess.info())
	}
	return out
}

// Counters are the server-wide counts since start.
type Counters struct {
	Requests       uint64 `json:"requests"`
	Errors         uint64 `json:"errors"`
	Panics         uint64 `json:"panics"`
	Connections    int64  `json:"connections"`
	ConnectionsAll uint64 `json:"connections_total"`
	// HeldBytes is what pending requests and partly read lines hold now,
	// of MaxHeldBytes; Overloaded counts requests the daemon-wide bound
	// refused.
	HeldBytes    int64  `json:"held_bytes"`
	MaxHeldBytes int64  `json:"max_held_bytes"`
	Overloaded   uint64 `json:"overloaded"`
}

// Counters returns the current counts.
func (s *Server) Counters() Counters {
	return Counters{
		Requests:       s.requests.Load(),
		Errors:         s.errors.Load(),
		Panics:         s.panics.Load(),
		Connections:    s.sessions.Load(),
		ConnectionsAll: s.total.Load(),
		HeldBytes:      s.held.Used(),
		MaxHeldBytes:   s.held.Max(),
		Overloaded:     s.overloads.Load(),
	}
}

// ToolCounters are one tool's figures since start.
type ToolCounters struct {
	Name   string  `json:"name"`
	Calls  uint64  `json:"calls"`
	Errors uint64  `json:"errors"`
	P50ms  float64 `json:"p50_ms"`
	P99ms  float64 `json:"p99_ms"`
}

// ToolCounters returns every registered tool's figures, sorted by name; tools
// never called show zeros.
func (s *Server) ToolCounters() []ToolCounters {
	var out []ToolCounters
	for _, e := range s.opts.Registry.List() {
		tc := ToolCounters{Name: e.Name}
		s.statsMu.Lock()
		st := s.tools[e.Name]
		s.statsMu.Unlock()
		if st != nil {
			tc.Calls = st.calls.Load()
			tc.Errors = st.errors.Load()
			tc.P50ms = ms(st.latency.Quantile(0.50))
			tc.P99ms = ms(st.latency.Quantile(0.99))
		}
		out = append(out, tc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (s *Server) recordCall(name string, d time.Duration, failed bool) {
	s.statsMu.Lock()
	st := s.tools[name]
	if st == nil {
		st = &toolStats{}
		s.tools[name] = st
	}
	s.statsMu.Unlock()
	st.calls.Add(1)
	if failed {
		st.errors.Add(1)
	}
	st.latency.Record(d)
}
