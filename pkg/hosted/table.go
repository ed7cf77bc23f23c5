package hosted

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/hosted/catalog"
	"github.com/hearth-mcp/hearth/pkg/hosted/route"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
)

// Table holds the daemon's hosted instances by key.
type Table struct {
	sup       *supervisor.Supervisor
	logDir    string
	log       *zap.Logger
	logCap    int64
	cat       *catalog.Store // nil: no catalog
	drainWait time.Duration

	mu     sync.Mutex
	inst   map[string]*Instance
	closed bool
}

// Options configure a Table.
type Options struct {
	Supervisor *supervisor.Supervisor
	// LogDir holds each instance's stderr log (created when needed).
	LogDir string
	Logger *zap.Logger
	LogCap int64 // bytes of one log before it is rotated (0: DefaultLogCap)
	// CatalogDir holds the catalog of what each instance's server
	// answered (catalog.go); "" keeps none.
	CatalogDir string
	// DrainWait bounds how long a drain waits for the upstream's answers
	// to a client's requests in flight (the daemon's drain_timeout; 0:
	// not at all).
	DrainWait time.Duration
}

// NewTable returns an empty table.
func NewTable(o Options) *Table {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.LogCap <= 0 {
		o.LogCap = DefaultLogCap
	}
	t := &Table{sup: o.Supervisor, logDir: o.LogDir, log: o.Logger, logCap: o.LogCap, inst: map[string]*Instance{}, drainWait: o.DrainWait}
	if o.CatalogDir != "" {
		t.cat = catalog.Open(o.CatalogDir, checkEntry)
	}
	return t
}

// ErrClosed: the table is shutting down.
var ErrClosed = errors.New("the daemon is shutting down")

// Session is one client connection attached to an instance: the
// dispatcher of its mcp session (mcp.Dispatcher), which hands each frame
// the session read to the instance's router (docs/architecture.md, "The
// session in parts").
type Session struct {
	inst *Instance
	c    *route.Client
	w    mcp.Writer
	tag  string // "shim:PID", its shim (Attach)

	once     sync.Once
	draining atomic.Bool
	done     chan struct{}
	doneOnce sync.Once
}

var _ mcp.Dispatcher = (*Session)(nil)

// Handle routes one frame the client sent, as the session decoded it: msg,
// or perr when it is not JSON-RPC.
func (s *Session) Handle(msg *jsonrpc.Message, perr *jsonrpc.ParseError) { s.c.HandleParsed(msg, perr) }

// Answer sends the client a reply its session decided (a frame too large,
// an internal method refused). The session's writer takes it from any
// goroutine.
func (s *Session) Answer(frame []byte, re string) { _ = s.w.Write(frame, re) }

// EndInput serves the end of the client's input. The client closing its
// input ends what it asked of the server: a server spawned directly would
// die with its stdin, so each request still in flight is answered now with
// an error and cancelled upstream (route.Client.EndInput), while the
// client stays attached, so the answers reach it (hearth's own sessions
// instead answer every request read before the end: docs/architecture.md,
// "Hosted servers"). A drain is no client's doing: nothing is cancelled
// then.
func (s *Session) EndInput(err error) {
	if errors.Is(err, io.EOF) && !s.draining.Load() {
		s.c.EndInput(inputClosedMessage)
	}
	if s.draining.Load() && !errors.Is(err, io.EOF) {
		return // the drain's end of input: Drain decides when the session ends
	}
	s.finish()
}

// inputClosedMessage answers a hosted client's requests cancelled because
// its input ended.
const inputClosedMessage = "cancelled: the client closed its input"

// Drain: the daemon stops. The session ends once the upstream has answered
// what the client has in flight, or after the table's DrainWait; Detach
// then cancels upstream what is still in flight (its answer is lost, and
// the shim owes the client -32004: docs/decisions/0046-upstream-handover.md).
func (s *Session) Drain() {
	s.draining.Store(true)
	wait := s.inst.t.drainWait
	if wait <= 0 {
		s.finish()
		return
	}
	t := time.AfterFunc(wait, s.finish)
	s.c.WhenSettled(func() {
		t.Stop()
		s.finish()
	})
}

// HangUp: the client is gone.
func (s *Session) HangUp() { s.finish() }

// Done is closed once the session may end (EndInput, Drain or HangUp).
func (s *Session) Done() <-chan struct{} { return s.done }

func (s *Session) finish() { s.doneOnce.Do(func() { close(s.done) }) }

// Status names the hosted server, and who the client said it is in what
// the router decoded (its initialize, or a modern probe).
func (s *Session) Status(ci *mcp.ClientInfo) {
	ci.Hosted, ci.HostedKey = s.Label(), s.inst.key
	if pid, err := strconv.Atoi(strings.TrimPrefix(s.tag, "shim:")); err == nil {
		ci.ShimPID = pid
	}
	id, ok := s.c.Identity()
	if !ok {
		return
	}
	ci.ProtocolVersion = id.ProtocolVersion
	if !id.Modern || id.Name != "" {
		ci.Name, ci.Version = id.Name, id.Version
	}
}

// Detach ends the client's attachment: what it still has in flight is
// cancelled upstream. The instance may stop after its idle timeout.
//
// A drain's detach parks instead (route.Client.Park): the client's
// subscriptions and log level are kept for its return, to this daemon's
// successor after a hand-over (docs/decisions/0046-upstream-handover.md).
func (s *Session) Detach() {
	s.once.Do(func() {
		if s.draining.Load() {
			s.c.Park()
		} else {
			s.c.Detach()
		}
		s.inst.detached()
	})
}

// Instance is the key of the instance the session is attached to.
func (s *Session) Instance() string { return s.inst.key }

// Label names the hosted server.
func (s *Session) Label() string { return s.inst.spec.Label() }

// Pending is how many of the client's requests are unanswered.
func (s *Session) Pending() int { return s.c.Pending() }

// Attach attaches a client to the instance of spec for its directory and
// connection (creating it; its upstream starts with the first request).
// The client's frames go to peer; gone is called if the client is given up.
// tag names the client across daemons (its shim's pid; "" for none): one
// that a drain detached gets back what it had set on the upstream.
func (t *Table) Attach(spec Spec, clientDir string, conn uint64, tag string, peer route.Peer, gone func(error)) (*Session, error) {
	if err := spec.CheckPlace(clientDir); err != nil {
		return nil, err
	}
	scope := spec.Scope(clientDir, conn)
	key := spec.Key(scope)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, ErrClosed
	}
	in := t.inst[key]
	if in == nil {
		in = t.newInstance(spec, key, scope, clientDir)
		t.inst[key] = in
		in.fromCatalog()
	}
	in.attached()
	c := in.r.Attach(peer, gone)
	c.Resume(tag)
	return &Session{inst: in, c: c, w: peer, tag: tag, done: make(chan struct{})}, nil
}

// logPath is the file of an instance's log: its name (ServerName: the
// config name, or the package, image or script it runs, never another
// argument), made safe, and its key, which tells instances of one name
// apart.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func (t *Table) logPath(spec Spec, key string) string {
	if t.logDir == "" {
		return ""
	}
	base := unsafeName.ReplaceAllString(spec.ServerName(), "_")
	if len(base) > 40 {
		base = base[:40]
	}
	return filepath.Join(t.logDir, base+"-"+key+".log")
}

// Statuses describes every instance, ordered by label then key.
func (t *Table) Statuses() []Status {
	t.mu.Lock()
	list := make([]*Instance, 0, len(t.inst))
	for _, in := range t.inst {
		list = append(list, in)
	}
	t.mu.Unlock()
	out := make([]Status, 0, len(list))
	seen := map[string]bool{}
	for _, in := range list {
		out = append(out, in.status())
		seen[in.key] = true
	}
	if t.cat != nil {
		// Catalogued servers no instance serves now: when they last ran and
		// what a client attaching to them is answered with.
		for _, e := range t.cat.All() {
			if seen[e.Key] {
				continue
			}
			out = append(out, Status{Server: e.Server, Name: e.Name, Command: e.Identity.Command, Key: e.Key,
				State: "stopped", Era: e.Era, Catalog: catalogStatus(e, true)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// Restart stops the upstream of the instances name names (find: a
// server's name, or a key prefix) and clears a failure; the next request
// starts a fresh one. It returns how many instances it restarted, or a
// *FindError.
func (t *Table) Restart(name string) (int, error) {
	list, err := t.find(name, "restart")
	for _, in := range list {
		in.restart()
	}
	return len(list), err
}

// Stop stops the instances name names for good: their clients get an error
// for each request until they reconnect. It returns how many it stopped, or
// a *FindError.
func (t *Table) Stop(name string) (int, error) {
	list, err := t.find(name, "stop")
	for _, in := range list {
		in.stopForGood(fmt.Errorf("%s was stopped by hearthd servers stop", in.spec.Label()))
	}
	return len(list), err
}

// Forget drops the catalog entries of the servers name names (a server's
// name or label, or a key prefix, as Restart takes it, among running
// instances and catalogued servers alike): their next client waits for a
// started server. It returns how many entries it dropped.
func (t *Table) Forget(name string) (int, error) {
	if t.cat == nil {
		return 0, errors.New("this daemon keeps no catalog of hosted servers (it has no state directory)")
	}
	n := 0
	for _, e := range t.cat.All() {
		if e.Name == name || e.Server == name || (len(name) >= minKeyPrefix && hexDigits.MatchString(name) && strings.HasPrefix(e.Key, name)) {
			if ok, err := t.cat.Forget(e.Key); err != nil {
				return n, err
			} else if ok {
				n++
			}
			t.mu.Lock()
			in := t.inst[e.Key]
			t.mu.Unlock()
			if in != nil {
				in.r.ForgetCatalog()
			}
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("no hosted server named %q has a catalog entry, and no entry's key starts with it (hearthd status lists them)", name)
	}
	return n, nil
}

// Close stops every instance (daemon shutdown).
func (t *Table) Close() {
	t.mu.Lock()
	t.closed = true
	list := make([]*Instance, 0, len(t.inst))
	for _, in := range t.inst {
		list = append(list, in)
	}
	t.mu.Unlock()
	var wg sync.WaitGroup
	for _, in := range list {
		wg.Add(1)
		go func() { defer wg.Done(); in.stopForGood(ErrClosed) }()
	}
	wg.Wait()
}

func (t *Table) ensureLogDir() {
	if t.logDir != "" {
		_ = os.MkdirAll(t.logDir, 0o700)
	}
}
