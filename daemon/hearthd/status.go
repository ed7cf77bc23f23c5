package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hearth-mcp/hearth/pkg/adopt"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/hosted"
	"github.com/hearth-mcp/hearth/pkg/localsock"
	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/owner"
)

// statusClientName is how `hearthd status` introduces itself, so it can
// leave its own connection out of the clients it lists.
const statusClientName = "hearthd-status"

// Exit codes of `hearthd status`.
const (
	statusServing  = 0
	statusNone     = 1 // no daemon serves this data directory
	statusUsage    = 2
	statusUnhealth = 4 // a daemon answered, but not as expected
)

// statusCmd prints the daemon that serves this user's data directory, its
// clients and its per-tool counts: what a person sharing one daemon between
// several editors needs to see. --json prints daemon_status's object.
//
// `hearthd status NAME` shows only the hosted server NAME names (its name,
// a name its clients' entries give it, its label or a key prefix): its
// instances, what tells them apart, their catalog and last errors.
func statusCmd(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	asJSON, name := false, ""
	for _, a := range args {
		switch {
		case a == "--json":
			asJSON = true
		case name == "" && !strings.HasPrefix(a, "-"):
			name = a
		default:
			fmt.Fprintf(stderr, "hearthd status: unexpected argument %q (usage: hearthd status [--json] [NAME])\n", a)
			return statusUsage
		}
	}
	if name != "" {
		return statusOfServer(name, asJSON, stdout, stderr, getenv)
	}
	home, err := endpoint.Home(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd status:", err)
		return statusUsage
	}
	socket, owned, err := statusSocket(home, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd status:", err)
		printService(stdout, getenv, asJSON)
		printClientConfigs(stdout, getenv, asJSON)
		return statusNone
	}
	raw, err := queryStatus(socket)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd status:", noneServes(home, socket, owned, err))
		printService(stdout, getenv, asJSON)
		printClientConfigs(stdout, getenv, asJSON)
		return statusNone
	}
	if asJSON {
		stdout.Write(append(raw, '\n'))
		return statusServing
	}
	var st statusView
	if err := json.Unmarshal(raw, &st); err != nil {
		fmt.Fprintf(stderr, "hearthd status: the daemon's status did not decode: %v\n", err)
		return statusUnhealth
	}
	// This shell's XDG variables may name places the daemon's environment
	// did not: say those too.
	for _, u := range endpoint.Unfollowed(endpoint.Getenv(getenv)) {
		if !slices.Contains(st.Places.Unfollowed, u) {
			st.Places.Unfollowed = append(st.Places.Unfollowed, u)
		}
	}
	st.Service = installedService(runtime.GOOS, getenv, thisBinary())
	st.print(stdout, socket)
	fmt.Fprintln(stdout)
	printClientConfigs(stdout, getenv, asJSON)
	return statusServing
}

// statusOfServer is `hearthd status NAME`: the hosted server's instances.
func statusOfServer(name string, asJSON bool, stdout, stderr io.Writer, getenv func(string) string) int {
	list, ok := hostedOf(stderr, getenv, "hearthd status")
	if !ok {
		return statusNone
	}
	var found []hosted.Status
	names := map[string]bool{}
	for _, h := range list {
		names[h.Name] = true
		if namesHosted(h, name) {
			found = append(found, h)
		}
	}
	if len(found) == 0 {
		known := make([]string, 0, len(names))
		for n := range names {
			known = append(known, n)
		}
		sort.Strings(known)
		fmt.Fprintf(stderr, "hearthd status: no hosted server is named %q, and no key starts with it (hosted servers: %s)\n", name, dash(strings.Join(known, ", ")))
		return statusNone
	}
	if asJSON {
		b, _ := json.MarshalIndent(found, "", "  ")
		stdout.Write(append(b, '\n'))
		return statusServing
	}
	printHosted(stdout, found)
	return statusServing
}

// printService is the service line when no daemon answered: a service
// that starts a missing binary is often why.
func printService(out io.Writer, getenv func(string) string, asJSON bool) {
	if !asJSON {
		fmt.Fprintf(out, "service: %s\n", installedService(runtime.GOOS, getenv, thisBinary()))
	}
}

// thisBinary is this hearthd's path with links resolved, or "" if the
// system cannot say.
func thisBinary() string {
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return ""
	}
	return self
}

// printClientConfigs shows, for each MCP client config of this user's,
// how many of its servers go through hearth and how many stdio servers
// `hearthd adopt` could still move (not with --json, which is
// daemon_status's object alone).
func printClientConfigs(out io.Writer, getenv func(string) string, asJSON bool) {
	if asJSON {
		return
	}
	env, err := adoptEnv(getenv)
	if err != nil {
		return
	}
	files := loadConfigs(adopt.Locations(env, nil))
	fmt.Fprintf(out, "client configs (%d):\n", len(files))
	if len(files) == 0 {
		return
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  CLIENT\tFILE\tSERVERS\tTHROUGH HEARTH\tSTDIO NOT YET\tREMOTE")
	movable := 0
	for _, f := range files {
		if f.Err != nil {
			fmt.Fprintf(w, "  %s\t%s\t%s\n", f.Client, tilde(f.Path, env.Home), "not read: "+f.Err.Error())
			continue
		}
		total, through, stdio, remote := f.Count()
		movable += stdio
		fmt.Fprintf(w, "  %s\t%s\t%d\t%d\t%d\t%d\n", f.Client, tilde(f.Path, env.Home), total, through, stdio, remote)
	}
	w.Flush()
	if movable > 0 {
		fmt.Fprintf(out, "  `hearthd adopt` shows how it would move the %s not yet behind hearth.\n", plural(movable, "stdio server"))
	}
}

// statusSocket finds where the daemon for home listens: its owner's record
// (owned), else the socket this environment names (a socket-activated
// daemon that has not started yet answers there).
func statusSocket(home string, getenv func(string) string) (socket string, owned bool, err error) {
	rec, state, err := owner.Find(home)
	if err == nil && state == owner.Serving {
		if rec.Socket == "" {
			return "", true, fmt.Errorf("the data directory %s is owned by hearthd %s (pid %d), which serves no socket", home, rec.Mode, rec.PID)
		}
		return rec.Socket, true, nil
	}
	path, _, err := endpoint.SocketPath(endpoint.Getenv(getenv))
	if err != nil {
		return "", false, err
	}
	return path, false, nil
}

// noneServes words why no daemon answered for home: a socket or a server
// of another user's, refused (localsock.ErrNotOurs); an owner that does not
// answer, or none at all, and then what a dead one left behind (a daemon
// killed with SIGKILL leaves its record, socket and readiness file; the
// next one removes them).
func noneServes(home, socket string, owned bool, err error) string {
	if errors.Is(err, localsock.ErrNotOurs) {
		return err.Error()
	}
	if owned {
		return fmt.Sprintf("the daemon that owns %s does not answer on its socket %s: %v", home, socket, err)
	}
	msg := "no hearth daemon serves " + home
	if rec, ok := owner.Stale(home); ok {
		msg += fmt.Sprintf("; the last one (pid %d, hearthd %s, started %s) ended without cleaning up", rec.PID, rec.Mode, rec.Started.Local().Format(time.DateTime))
		var left []string
		for _, p := range []string{rec.Socket, rec.Ready} {
			if _, err := os.Lstat(p); p != "" && err == nil {
				left = append(left, p)
			}
		}
		if len(left) > 0 {
			msg += ": " + strings.Join(left, " and ") + " are stale, and the next daemon removes them"
		}
	} else if fi, err := os.Lstat(socket); err == nil && fi.Mode().Type() == os.ModeSocket {
		msg += "; nothing listens on " + socket + " (a stale socket file: the next daemon replaces it)"
	}
	return msg + ". A client's shim starts one; or run `hearthd serve`"
}

// queryStatus asks the daemon on socket for daemon_status over MCP and
// returns its structured result.
func queryStatus(socket string) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := daemonTool(socket, statusClientName, "daemon_status", map[string]any{}, 0, &raw); err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, errors.New("daemon_status answered no result")
	}
	return raw, nil
}

// statusView is the part of daemon_status a person reads.
type statusView struct {
	Service string `json:"-"` // installedService's line, filled by the CLI

	Version       string             `json:"toolingVersion"`
	PID           int                `json:"pid"`
	Mode          string             `json:"mode"`
	Home          string             `json:"home"`
	Store         string             `json:"store"`
	StartedAt     string             `json:"started_at"`
	UptimeSeconds float64            `json:"uptime_s"`
	Requests      uint64             `json:"requests"`
	Errors        uint64             `json:"errors"`
	Children      int                `json:"children"`
	Clients       []mcp.ClientInfo   `json:"clients"`
	Tools         []mcp.ToolCounters `json:"tools"`
	Problems      []string           `json:"problems"`
	Hosted        []hosted.Status    `json:"hosted"`
	Savings       struct {
		Line string `json:"line"`
	} `json:"savings"`
	Places struct {
		Data, Config, Socket endpoint.Place
		Unfollowed           []string
	} `json:"places"`
	HTTP struct {
		URL       string `json:"url"`
		Auth      string `json:"auth"`
		TokenFile string `json:"token_file"`
	} `json:"http"`
}

func (st *statusView) print(out io.Writer, socket string) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	uptime := (time.Duration(st.UptimeSeconds) * time.Second).String()
	fmt.Fprintf(w, "hearthd\tpid %d, %s mode, %s\n", st.PID, st.Mode, st.Version)
	fmt.Fprintf(w, "socket\t%s\n", withWhy(socket, st.Places.Socket))
	fmt.Fprintf(w, "home\t%s\n", withWhy(st.Home, st.Places.Data))
	if c := st.Places.Config; c.Path != "" {
		fmt.Fprintf(w, "config\t%s\n", withWhy(c.Path, c))
	}
	if st.Store != "" {
		fmt.Fprintf(w, "store\t%s\n", st.Store)
	}
	fmt.Fprintf(w, "uptime\t%s (since %s)\n", uptime, st.StartedAt)
	fmt.Fprintf(w, "requests\t%d (%d errors), %d child processes running\n", st.Requests, st.Errors, st.Children)
	if st.HTTP.URL != "" {
		fmt.Fprintf(w, "http\t%s (auth: %s)\n", st.HTTP.URL, st.HTTP.Auth)
	}
	if st.Service != "" {
		fmt.Fprintf(w, "service\t%s\n", st.Service)
	}
	w.Flush()
	if len(st.Places.Unfollowed) > 0 {
		fmt.Fprintf(out, "\nnot used (%d):\n", len(st.Places.Unfollowed))
		for _, u := range st.Places.Unfollowed {
			fmt.Fprintf(out, "  %s\n", u)
		}
	}
	st.printHTTPClients(out)
	if len(st.Problems) > 0 {
		fmt.Fprintf(out, "\nproblems (%d):\n", len(st.Problems))
		for _, p := range st.Problems {
			fmt.Fprintf(out, "  %s\n", p)
		}
	}

	clients := st.Clients[:0]
	for _, c := range st.Clients {
		if c.Name != statusClientName {
			clients = append(clients, c)
		}
	}
	fmt.Fprintf(out, "\nclients (%d):\n", len(clients))
	if len(clients) > 0 {
		w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "  CLIENT\tPID\tDIRECTORY\tSINCE\tRUNNING\tSHIM\tTRANSPORT")
		for _, c := range clients {
			name := strings.TrimSpace(c.Name + " " + c.Version)
			if name == "" {
				name = "(no initialize)"
			}
			shim := c.ShimVersion
			if shim == "" {
				shim = "-"
			}
			fmt.Fprintf(w, "  %s\t%d\t%s\t%s\t%d\t%s\t%s\n", name, c.PID, dash(c.Cwd), c.Since.Local().Format("15:04:05"), c.Running, shim, dash(c.Transport))
		}
		w.Flush()
	}
	printHosted(out, st.Hosted)
	if st.Savings.Line != "" && len(st.Hosted) > 0 {
		fmt.Fprintf(out, "  %s\n", st.Savings.Line)
	}
	var used []int
	for i, t := range st.Tools {
		if t.Calls > 0 {
			used = append(used, i)
		}
	}
	sort.SliceStable(used, func(a, b int) bool { return st.Tools[used[a]].Calls > st.Tools[used[b]].Calls })
	fmt.Fprintf(out, "\ntools called (%d of %d):\n", len(used), len(st.Tools))
	if len(used) > 0 {
		w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "  TOOL\tCALLS\tERRORS\tP50 MS\tP99 MS")
		for _, i := range used {
			t := st.Tools[i]
			fmt.Fprintf(w, "  %s\t%d\t%d\t%.2f\t%.2f\n", t.Name, t.Calls, t.Errors, t.P50ms, t.P99ms)
		}
		w.Flush()
	}
}

// withWhy is a path and, when the daemon said, why it is that one.
func withWhy(path string, p endpoint.Place) string {
	if p.Why == "" || p.Path != path {
		return path
	}
	return path + " (" + p.Why + ")"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printHosted lists the hosted servers' instances: by name (what
// `hearthd servers` takes, with a key prefix), then what each runs.
func printHosted(out io.Writer, list []hosted.Status) {
	fmt.Fprintf(out, "\nhosted servers (%d):\n", len(list))
	if len(list) == 0 {
		return
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  NAME\tKEY\tSHARING\tSTATE\tPID\tERA\tCLIENTS\tRSS\tUPTIME\tRESTARTS")
	for _, h := range list {
		pid, rss, up := "-", "-", "-"
		if h.Pid > 0 {
			pid = fmt.Sprint(h.Pid)
			rss = fmt.Sprintf("%.1f MB", float64(h.RSSBytes)/1e6)
			up = (time.Duration(h.UptimeSeconds) * time.Second).String()
		} else if h.UptimeSeconds > 0 {
			up = (time.Duration(h.UptimeSeconds) * time.Second).String() // a remote server: no process
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%d\n", h.Name, h.Key, h.Sharing, h.State, pid, dash(h.Era), h.Clients, rss, up, h.Restarts)
	}
	w.Flush()
	for _, h := range list {
		fmt.Fprintf(out, "  %s: %s", h.Key, instanceWords(h))
		if h.Log != "" {
			fmt.Fprintf(out, "; log %s", h.Log)
		}
		fmt.Fprintln(out)
		if h.LastError != "" {
			fmt.Fprintf(out, "  %s: last error: %s\n", h.Key, h.LastError)
		}
		if g := h.Gate; g != nil {
			fmt.Fprintf(out, "  %s: %s\n", h.Key, gateWords(h.Sharing, g))
		}
		if c := h.Catalog; c != nil {
			answers := "answered from it while stopped"
			if !c.Answers {
				answers = "not answered from (its code changed, its lists are stale, or catalog = false)"
			}
			fmt.Fprintf(out, "  %s: catalog: %d tools, %d prompts, %d resources, %d templates, %s old, last ran %s ago; %s\n",
				h.Key, c.Tools, c.Prompts, c.Resources, c.Templates, (time.Duration(c.AgeSeconds) * time.Second).String(),
				time.Since(c.LastRan).Round(time.Second), answers)
		}
	}
}

// printHTTPClients prints the lines that configure an HTTP client with the
// endpoint, token included: hearthd status runs as the user who may read it.
// The entry is named hearth-http, not hearth: a client that already runs
// the shim under "hearth" (the README's first step) refuses a second entry
// of that name (Claude Code: "MCP server hearth already exists").
func (st *statusView) printHTTPClients(out io.Writer) {
	if st.HTTP.URL == "" {
		return
	}
	header := ""
	if st.HTTP.Auth == "token" {
		b, err := os.ReadFile(st.HTTP.TokenFile)
		if err != nil {
			fmt.Fprintf(out, "\nhttp token: %v\n", err)
			return
		}
		header = "Authorization: Bearer " + strings.TrimSpace(string(b))
	}
	fmt.Fprintf(out, "\nHTTP clients (the token is a password: keep these lines to yourself):\n")
	if header == "" {
		fmt.Fprintf(out, "  claude mcp add -s user --transport http hearth-http %s\n", st.HTTP.URL)
		fmt.Fprintf(out, "  Cursor (mcpServers) / VS Code (servers): \"hearth-http\": {\"type\": \"http\", \"url\": %q}\n", st.HTTP.URL)
		return
	}
	fmt.Fprintf(out, "  claude mcp add -s user --transport http hearth-http %s --header %q\n", st.HTTP.URL, header)
	fmt.Fprintf(out, "  Cursor (mcpServers) / VS Code (servers): \"hearth-http\": {\"type\": \"http\", \"url\": %q, \"headers\": {\"Authorization\": %q}}\n",
		st.HTTP.URL, strings.TrimPrefix(header, "Authorization: "))
}

// gateWords says who holds an exclusive or capped server and how many
// wait (docs/decisions/0074-exclusive-and-capped-servers.md).
func gateWords(sharing string, g *hosted.GateStatus) string {
	what := "exclusive, one client at a time"
	if sharing != string(hosted.Exclusive) {
		what = fmt.Sprintf("capped at %d instances", g.Limit)
	}
	held := "nobody"
	if len(g.Holders) > 0 {
		held = strings.Join(g.Holders, ", ")
	}
	return fmt.Sprintf("%s: held by %s; %d waiting (queue %d)", what, held, g.Waiting, g.Queue)
}
