package hosted

import (
	"slices"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/hosted/catalog"
	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// Status describes one instance for hearthd status and daemon_status. It
// holds no environment value: only the names of the variables set.
type Status struct {
	Server  string `json:"server"` // the config name, else the command and arguments (redacted)
	Name    string `json:"name"`   // Spec.ServerName: the config name, else what the command runs
	Command string `json:"command"`
	// URL is a remote server's address, without user information, query
	// or fragment (RemoteLabel); HeaderNames the headers its entry sends
	// (no values); Auth where its sign-in stands (no secret).
	URL           string   `json:"url,omitempty"`
	HeaderNames   []string `json:"headerNames,omitempty"`
	Auth          any      `json:"auth,omitempty"`
	Sharing       string   `json:"sharing"`
	Scope         string   `json:"scope,omitempty"` // the directory, or the connection, it is for
	Key           string   `json:"key"`
	State         string   `json:"state"` // idle, starting, running, failed
	Pid           int      `json:"pid,omitempty"`
	Era           string   `json:"era,omitempty"` // the protocol version the upstream answered initialize with
	Clients       int      `json:"clients"`
	RSSBytes      int64    `json:"rssBytes,omitempty"` // of its whole tree: keeper, upstream, descendants
	UptimeSeconds float64  `json:"uptimeSeconds,omitempty"`
	Restarts      int      `json:"restarts"`
	LastError     string   `json:"lastError,omitempty"`
	Log           string   `json:"log"`
	EnvNames      []string `json:"envNames,omitempty"`
	// Entries are the names its clients' entries give it (hearth run
	// --name), which hearthd servers takes.
	Entries []string `json:"entries,omitempty"`
	// Shape words the shape of the clients it serves (route.Described:
	// the protocol version and capabilities they declare).
	Shape string `json:"shape,omitempty"`
	// Differs words what tells it apart from the other instances of its
	// name (never a variable's value); "" when it is alone.
	Differs string `json:"differs,omitempty"`
	// Catalog is what the catalog holds for the instance's key
	// (docs/decisions/0045-hosted-catalog.md); a catalogued server with no
	// instance is listed with state "stopped".
	Catalog *CatalogStatus `json:"catalog,omitempty"`
	// Gate says who holds an exclusive or capped server and how many
	// wait (gate.go).
	Gate *GateStatus `json:"gate,omitempty"`
}

// CatalogStatus describes a catalog entry.
type CatalogStatus struct {
	Tools     int       `json:"tools"`
	Prompts   int       `json:"prompts"`
	Resources int       `json:"resources"`
	Templates int       `json:"resourceTemplates"`
	Recorded  time.Time `json:"recorded"`
	// AgeSeconds is how long ago the lists were fetched.
	AgeSeconds float64   `json:"ageSeconds"`
	LastRan    time.Time `json:"lastRan"`
	// Version is what the server said it was (serverInfo.version).
	Version string `json:"version,omitempty"`
	// Answers: clients are answered from it (false: no longer the server's
	// code, stale by its ttlMs, or catalog = false).
	Answers bool `json:"answers"`
}

func catalogStatus(e *catalog.Entry, current bool) *CatalogStatus {
	cs := &CatalogStatus{Recorded: e.Recorded, LastRan: e.LastRan, Version: e.Identity.Resolved,
		AgeSeconds: time.Since(e.Recorded).Round(time.Second).Seconds(), Answers: current && e.Usable(time.Now())}
	cs.Tools, cs.Prompts, cs.Resources, cs.Templates = e.Counts()
	return cs
}

func (in *Instance) status() Status {
	in.mu.Lock()
	st := Status{
		Server: in.spec.Label(), Name: in.spec.ServerName(), Command: in.spec.Command, URL: urlOf(in.spec), Sharing: string(in.spec.Sharing),
		Scope: in.scope, Key: in.key, Clients: in.clients, Restarts: in.restarts, LastError: in.lastErr,
		Log: in.logPath, EnvNames: in.spec.EnvNames(), Entries: append([]string(nil), in.entries...),
	}
	st.State = in.stateLocked()
	if in.proc != nil {
		st.Pid = in.proc.pid()
		st.UptimeSeconds = time.Since(in.startedAt).Round(time.Second).Seconds()
	}
	in.mu.Unlock()
	if in.spec.IsRemote() {
		st.HeaderNames = in.spec.HeaderNames()
		if in.t.authStatus != nil {
			st.Auth = in.t.authStatus(in.spec)
		}
	}
	st.Shape = in.describedShape()
	st.Era = in.r.ProtocolVersion()
	if st.Pid > 0 {
		st.RSSBytes = treeRSS(st.Pid)
	}
	st.Gate = in.t.gateStatus(in.spec)
	if in.catalogued() {
		if e, ok := in.t.cat.Load(in.key); ok {
			st.Catalog = catalogStatus(e, e.Identity.Same(in.identify()))
		}
	}
	return st
}

// stateLocked is idle, starting, running or failed (in.mu held).
func (in *Instance) stateLocked() string {
	switch {
	case in.failed != nil:
		return "failed"
	case in.proc != nil && in.ready:
		return "running"
	case in.proc != nil || in.starting:
		return "starting"
	}
	return "idle"
}

// treeRSS sums the resident memory of pid and every process descended
// from it in the process table (0 where the table says none): the
// upstream's keeper, the upstream (whose process group is its own, not
// the keeper's) and all it started, a server started through npx being
// several processes and a setsid one its subreaper's child.
func treeRSS(pid int) int64 {
	procs, err := proctable.List()
	if err != nil {
		return 0
	}
	tree := proctable.Tree(procs, pid)
	proctable.Details(tree)
	var total int64
	for _, p := range tree {
		total += p.RSS
	}
	return total
}

func urlOf(s Spec) string {
	if !s.IsRemote() {
		return ""
	}
	return RemoteLabel(s.URL)
}

// HeaderNames are the names of the headers a remote spec sends (no
// values).
func (s Spec) HeaderNames() []string {
	var names []string
	for _, h := range s.Headers {
		name, _, _ := strings.Cut(h, ":")
		names = append(names, strings.TrimSpace(name))
	}
	slices.Sort(names)
	return names
}
