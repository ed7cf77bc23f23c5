package hosted

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/hosted/catalog"
	"github.com/hearth-mcp/hearth/pkg/hosted/route"
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
	remote    func(Spec, bool) (Remote, error)
	// authStatus says where a remote spec's sign-in stands (Status.Auth).
	authStatus func(Spec) any
	expandEnv  func([]string) ([]string, error)

	mu     sync.Mutex
	inst   map[string]*Instance
	closed bool

	// modernMu guards modern, and is taken last (the router's callbacks
	// take it with the router's lock held).
	modernMu sync.Mutex
	// modern holds, by base (Spec.Key without a shape), the instance whose
	// upstream speaks 2026-07-28: each request to it carries its client's
	// own capabilities, so every client of the base shares it, whatever
	// its shape (docs/decisions/0056-client-shape.md).
	modern map[string]*Instance

	// gates hold exclusive and capped servers' clients to their limits
	// (gate.go).
	gates gates
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
	// Remote connects to a remote server's spec (nil: remote servers
	// are refused); urlElicitation: the instance's clients declare
	// URL-mode elicitation, so a sign-in may be offered to them as one.
	Remote func(spec Spec, urlElicitation bool) (Remote, error)
	// AuthStatus says where a remote server's sign-in stands, without a
	// secret (nil: not shown).
	AuthStatus func(Spec) any
	// ExpandEnv replaces the stored-secret references of an upstream's
	// environment as it starts (nil: the values as written).
	ExpandEnv func([]string) ([]string, error)
}

// NewTable returns an empty table.
func NewTable(o Options) *Table {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.LogCap <= 0 {
		o.LogCap = DefaultLogCap
	}
	t := &Table{sup: o.Supervisor, logDir: o.LogDir, log: o.Logger, logCap: o.LogCap, inst: map[string]*Instance{}, drainWait: o.DrainWait, remote: o.Remote, authStatus: o.AuthStatus, expandEnv: o.ExpandEnv,
		modern: map[string]*Instance{}}
	if o.CatalogDir != "" {
		t.cat = catalog.Open(o.CatalogDir, checkEntry)
	}
	return t
}

// ErrClosed: the table is shutting down.
var ErrClosed = errors.New("the daemon is shutting down")

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
	differs := differences(list)
	for i, in := range list {
		st := in.status()
		st.Differs = differs[i]
		out = append(out, st)
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
				State: "stopped", Era: e.Era, Shape: route.Described(e.InitParams), Catalog: catalogStatus(e, true)})
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
