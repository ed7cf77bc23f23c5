package daemon

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/hearth-mcp/hearth/pkg/config"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/hosted"
	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/savings"
	"github.com/hearth-mcp/hearth/pkg/tool"
	"github.com/hearth-mcp/hearth/pkg/version"
)

// statusResult is daemon_status's result object.
type statusResult struct {
	Version        string             `json:"version"`
	ToolingVersion string             `json:"toolingVersion"`
	PID            int                `json:"pid"`
	Mode           Mode               `json:"mode"`
	StartedAt      string             `json:"started_at"`
	UptimeSeconds  float64            `json:"uptime_s"`
	Connections    statusConnections  `json:"connections"`
	Requests       uint64             `json:"requests"`
	Errors         uint64             `json:"errors"`
	Panics         uint64             `json:"panics"`
	Children       int                `json:"children"`
	Tools          []mcp.ToolCounters `json:"tools"`
	Settings       statusSettings     `json:"settings"`
	// Home is the data directory this daemon owns, Socket where clients
	// attach ("" for a stdio daemon without one), Stores its durable stores.
	Home   string `json:"home"`
	Socket string `json:"socket"`
	// Places says where the data directory, the config file and the socket
	// are and why those (docs/decisions/0029-one-place-per-user.md).
	Places  statusPlaces     `json:"places"`
	Store   string           `json:"store"`
	Clients []mcp.ClientInfo `json:"clients"`
	// HTTP is the Streamable HTTP endpoint (url "" when not served); its
	// sessions are among Clients, transport "http".
	HTTP statusHTTP `json:"http"`
	// Problems are what the families serve without (see
	// tool.ProblemReporter); empty when everything loaded.
	Problems []string `json:"problems"`
	// Hosted are the instances of hosted servers (hearth run); no
	// environment value is ever in it.
	Hosted []hosted.Status `json:"hosted"`
	// Savings is what sharing them saves now (ui.go, pkg/savings).
	Savings statusSavings `json:"savings"`
}

// statusSavings is what sharing the hosted servers saves: now, in one
// line, and the most since the daemon started.
type statusSavings struct {
	Now  savings.Figures `json:"now"`
	Line string          `json:"line"`
	Peak savings.Sample  `json:"peak"`
}

// statusSettings is where the daemon's settings came from: the config file
// and, per setting, its value (secrets redacted) and source.
type statusSettings struct {
	// File is the config file looked for; FileRead is false when it does
	// not exist (every setting is then from the environment or a default).
	File     string           `json:"file"`
	FileRead bool             `json:"file_read"`
	Keys     []config.Setting `json:"keys"`
}

func (d *Daemon) statusSettings() statusSettings {
	s := d.Settings()
	if s == nil {
		return statusSettings{Keys: []config.Setting{}}
	}
	path, read := s.File()
	return statusSettings{File: path, FileRead: read, Keys: s.Sources()}
}

// statusPlaces are the daemon's locations, each with why it is that one.
type statusPlaces struct {
	Data   endpoint.Place `json:"data"`
	Config endpoint.Place `json:"config"`
	Socket endpoint.Place `json:"socket"`
	// Unfollowed lists what the daemon's own XDG variables name that
	// hearth does not use (a data directory or config file an older
	// hearth followed there).
	Unfollowed []string `json:"unfollowed"`
}

func (d *Daemon) statusPlaces() statusPlaces {
	p := statusPlaces{Data: endpoint.Place{Path: d.home, Why: d.opts.HomeWhy}, Socket: endpoint.Place{Path: d.socketPath, Why: d.socketWhy},
		Unfollowed: append([]string{}, d.opts.Unfollowed...)}
	if s := d.Settings(); s != nil {
		path, read := s.File()
		p.Config = endpoint.Place{Path: path, Why: s.FileWhy()}
		if !read {
			p.Config.Why += "; it does not exist, so every setting is from the environment or its default"
		}
	}
	return p
}

// statusHTTP is where Streamable HTTP is served, and whether a bearer token
// is required ("token", kept in TokenFile) or not ("none").
type statusHTTP struct {
	URL       string `json:"url"`
	Auth      string `json:"auth"`
	TokenFile string `json:"token_file"`
}

type statusConnections struct {
	Current int64  `json:"current"`
	Total   uint64 `json:"total"`
	Max     int    `json:"max"`
	// HeldBytes is what pending requests, partly read lines and bodies, and
	// what HTTP sessions keep for resumption (decision 0027) hold, of
	// MaxHeldBytes; Overloaded counts what that daemon-wide bound refused.
	HeldBytes    int64  `json:"held_bytes"`
	MaxHeldBytes int64  `json:"max_held_bytes"`
	Overloaded   uint64 `json:"overloaded"`
}

func (d *Daemon) statusTool() tool.Tool {
	return tool.For(tool.Tool{
		Name:  "daemon_status",
		Title: "hearth daemon status",
		Description: "Reports the hearth daemon's health: version, uptime, connections (current, total, the limit, and the memory pending requests hold against the daemon-wide bound), request and error counts, " +
			"child processes running for tools, per tool the calls, errors and p50/p99 latency in milliseconds since the daemon started, " +
			"the data directory it owns, its socket and store, where the data directory, config file and socket are and why (places), the clients attached (name, version, directory, since when, shim version, and transport: direct when the shim handed its client's stdio to the daemon, relay when it copies frames, socket, stdio or http), the Streamable HTTP endpoint (url, auth, token file), " +
			"and its settings: the config file, and per setting its value (secrets redacted), where it came from (env, file or default) " +
			"and any change waiting for a restart; problems lists what a family serves without (a schema file or an examples root that did not load); " +
			"hosted lists the hosted MCP servers (hearth run): name (the config name, the name its client's entry gives it, or the package, image or script an inline command runs), the entries' names, command line (secrets redacted), sharing, scope, key hash, the shape of the clients it serves (the protocol version and capabilities they declare), what tells it apart from other instances of its name (never a variable's value), state, pid, protocol version, clients, resident memory, uptime, restarts, last error and log file, for a remote server (hearth run --url) its URL without its query, the names of the headers it is sent and where its sign-in stands (state, issuer, scopes, expiry, never a token), and what its catalog holds (counts of tools, prompts, resources and templates, age, last run); a catalogued server that is not running is listed with state stopped; a reload whose config file could not be used is listed in problems, with the file's line, until a later reload succeeds; " +
			"savings says what sharing the hosted servers saves now: the processes and memory a direct spawn per window would take (each instance's clients times its measured process tree) beside what hearth runs for them (each tree once, its keeper, the shims), the difference, one line saying so, and the sample that saved the most since the daemon started.",
		InputSchema:   json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`),
		SchemaVersion: 15, // 2: the result gained "children"; 3: "settings", "home", "socket", "store", "clients"; 4: connections gained "max", "held_bytes", "max_held_bytes", "overloaded"; 5: "problems", and each client's "transport"; 6: "places"; 7: "hosted", and each client's "hosted"; 8: "http"; 9: outputSchema; 10: each hosted instance's "name" is always there (its config name, or what it runs); 11: each hosted entry's "catalog" (decision 0045), and catalogued servers that no instance serves, state "stopped"; 12: "savings", each client's "hosted_key" and "shim_pid", and a hosted instance's rssBytes its whole tree (decision 0063); 13: each hosted entry's "entries", "shape" and "differs" (decision 0056); 14: a remote server's "url", "headerNames" and "auth" (decision 0075); 15: each hosted entry's "gate", its holders and waiters (decision 0074)
		Annotations:   tool.Annotations{ReadOnly: true, Idempotent: true},
		Timeout:       5 * time.Second,
	}, func(ctx context.Context, call *tool.Call, _ struct{}) (statusResult, error) {
		c := d.srv.Counters()
		hostedNow := d.hosted.Statuses()
		return statusResult{
			Version:        version.Version,
			ToolingVersion: version.Tooling(),
			PID:            os.Getpid(),
			Mode:           d.cfg.Mode,
			StartedAt:      d.started.UTC().Format(time.RFC3339),
			UptimeSeconds:  time.Since(d.started).Seconds(),
			Connections: statusConnections{Current: c.Connections, Total: c.ConnectionsAll, Max: d.cfg.MaxConnections,
				HeldBytes: c.HeldBytes, MaxHeldBytes: c.MaxHeldBytes, Overloaded: c.Overloaded},
			Requests: c.Requests,
			Errors:   c.Errors,
			Panics:   c.Panics,
			Children: d.children.Live(),
			Tools:    d.srv.ToolCounters(),
			Settings: d.statusSettings(),
			Home:     d.home,
			Socket:   d.socketPath,
			Places:   d.statusPlaces(),
			Store:    d.store(),
			Clients:  d.srv.Clients(),
			HTTP:     d.statusHTTP(),
			Problems: d.problems(),
			Hosted:   hostedNow,
			Savings:  d.statusSavings(hostedNow),
		}, nil
	})
}

func (d *Daemon) statusSavings(statuses []hosted.Status) statusSavings {
	now, _, err := d.savingsMeter().Measure(statuses, d.srv.Clients())
	if err != nil {
		return statusSavings{Line: "not measured: " + err.Error()}
	}
	_, peak := d.savingsMeter().History()
	return statusSavings{Now: now, Line: now.Line(), Peak: peak}
}

// store names the families' durable stores (engine and place), "; "-joined.
func (d *Daemon) store() string {
	var out string
	d.eachFamily(func(f tool.Family) {
		if sd, ok := f.(tool.StoreDescriber); ok {
			if out != "" {
				out += "; "
			}
			out += sd.Store()
		}
	})
	return out
}

// problems gathers what the families report they serve without.
func (d *Daemon) problems() []string {
	out := []string{}
	if p := d.reloadProblem(); p != "" {
		out = append(out, p)
	}
	if err := d.reg.Compile(); err != nil {
		out = append(out, "tools whose schema does not compile (their calls fail): "+err.Error())
	}
	d.eachFamily(func(f tool.Family) {
		if pr, ok := f.(tool.ProblemReporter); ok {
			out = append(out, pr.Problems()...)
		}
	})
	return out
}

func (d *Daemon) statusHTTP() statusHTTP {
	url, auth, tokenFile := d.web.served()
	if url == "" {
		return statusHTTP{}
	}
	s := statusHTTP{URL: url, Auth: auth}
	if auth == "token" {
		s.TokenFile = tokenFile
	}
	return s
}
