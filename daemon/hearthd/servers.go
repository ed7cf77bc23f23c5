package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hearth-mcp/hearth/daemon"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/hosted"
)

const serversUsage = `usage: hearthd servers [list] [--json]
       hearthd servers restart|stop|forget NAME|KEY
list (the default) shows every hosted server: its state, clients and instances, each with what
tells it apart from the others of its name. restart stops a server's process (clearing a failure;
the next request starts it), stop stops it for good, forget drops what the catalog holds of it, so
that its next client waits for it to start. NAME is the name your client's entry gives it, its
[servers.NAME], or the package, image or script it runs, as hearthd servers lists it; KEY is 4 or
more hex digits that begin an instance's key.`

// serversCmd is `hearthd servers [list]` and `hearthd servers
// restart|stop|forget NAME`: the list is daemon_status's hosted servers,
// grouped by name; the others ask the daemon serving this data directory to
// act on a hosted server, named as the list shows it or by a key prefix;
// the daemon's refusal of a name that matches nothing, or several servers,
// lists what it could mean and what tells them apart.
func serversCmd(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 || args[0] == "list" || args[0] == "--json" {
		asJSON := false
		for i, a := range args {
			switch {
			case a == "--json":
				asJSON = true
			case a == "list" && i == 0:
			default:
				fmt.Fprintln(stderr, serversUsage)
				return 2
			}
		}
		return serversList(stdout, stderr, getenv, asJSON)
	}
	if len(args) != 2 || (args[0] != "restart" && args[0] != "stop" && args[0] != "forget") {
		fmt.Fprintln(stderr, serversUsage)
		return 2
	}
	home, err := endpoint.Home(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd servers:", err)
		return 1
	}
	socket, owned, err := statusSocket(home, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd servers:", err)
		return 1
	}
	var res struct {
		Instances int `json:"instances"`
	}
	// A control request of the socket's own, not a tool: models cannot
	// restart servers unless the config offers them hosted_servers.
	raw, err := daemonRequest(socket, statusClientName, daemon.ServersMethod, map[string]any{"action": args[0], "name": args[1]}, 30*time.Second)
	if err == nil {
		err = json.Unmarshal(raw, &res)
	}
	if err != nil {
		if _, qerr := queryStatus(socket); qerr != nil {
			fmt.Fprintln(stderr, "hearthd servers:", noneServes(home, socket, owned, qerr))
			return 1
		}
		fmt.Fprintln(stderr, "hearthd servers:", err)
		return 1
	}
	if args[0] == "forget" {
		fmt.Fprintf(stdout, "forgot %d catalog entr(y/ies) of %s\n", res.Instances, args[1])
		return 0
	}
	verb := map[string]string{"restart": "restarted", "stop": "stopped"}[args[0]]
	fmt.Fprintf(stdout, "%s %d instance(s) of %s\n", verb, res.Instances, args[1])
	return 0
}

// hostedOf is what daemon_status says of the hosted servers, from the
// daemon serving this data directory.
func hostedOf(stderr io.Writer, getenv func(string) string, who string) ([]hosted.Status, bool) {
	home, err := endpoint.Home(getenv)
	if err != nil {
		fmt.Fprintln(stderr, who+":", err)
		return nil, false
	}
	socket, owned, err := statusSocket(home, getenv)
	if err != nil {
		fmt.Fprintln(stderr, who+":", err)
		return nil, false
	}
	raw, err := queryStatus(socket)
	if err != nil {
		fmt.Fprintln(stderr, who+":", noneServes(home, socket, owned, err))
		return nil, false
	}
	var st struct {
		Hosted []hosted.Status `json:"hosted"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		fmt.Fprintf(stderr, "%s: the daemon's status did not decode: %v\n", who, err)
		return nil, false
	}
	return st.Hosted, true
}

// serverGroup is one hosted server as hearthd servers lists it: its
// instances (those of one name), and catalogued keys no instance serves.
type serverGroup struct {
	Name      string          `json:"name"`
	State     string          `json:"state"` // the instances' states, counted
	Clients   int             `json:"clients"`
	Instances []hosted.Status `json:"instances"`
	Stopped   []hosted.Status `json:"stopped,omitempty"` // catalogued, no instance
}

// groupServers groups statuses by name, in name order.
func groupServers(list []hosted.Status) []serverGroup {
	by := map[string]*serverGroup{}
	var names []string
	for _, h := range list {
		g := by[h.Name]
		if g == nil {
			g = &serverGroup{Name: h.Name, Instances: []hosted.Status{}}
			by[h.Name] = g
			names = append(names, h.Name)
		}
		if h.State == "stopped" {
			g.Stopped = append(g.Stopped, h)
			continue
		}
		g.Instances = append(g.Instances, h)
		g.Clients += h.Clients
	}
	sort.Strings(names)
	out := make([]serverGroup, 0, len(names))
	for _, n := range names {
		g := by[n]
		counts := map[string]int{}
		var states []string
		for _, h := range g.Instances {
			if counts[h.State] == 0 {
				states = append(states, h.State)
			}
			counts[h.State]++
		}
		sort.Strings(states)
		var parts []string
		for _, s := range states {
			if len(g.Instances) == 1 {
				parts = append(parts, s)
			} else {
				parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
			}
		}
		g.State = strings.Join(parts, ", ")
		if g.State == "" {
			g.State = "stopped"
		}
		out = append(out, *g)
	}
	return out
}

// serversList prints every hosted server with its state, clients and
// instances.
func serversList(stdout, stderr io.Writer, getenv func(string) string, asJSON bool) int {
	list, ok := hostedOf(stderr, getenv, "hearthd servers")
	if !ok {
		return 1
	}
	groups := groupServers(list)
	if asJSON {
		b, _ := json.MarshalIndent(groups, "", "  ")
		stdout.Write(append(b, '\n'))
		return 0
	}
	fmt.Fprintf(stdout, "hosted servers (%d):\n", len(groups))
	if len(groups) == 0 {
		fmt.Fprintln(stdout, "  none yet: a client's `hearth run` entry starts one (hearthd adopt moves your clients' stdio servers behind hearth)")
		return 0
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  NAME\tSTATE\tCLIENTS\tINSTANCES")
	for _, g := range groups {
		fmt.Fprintf(w, "  %s\t%s\t%d\t%d\n", g.Name, g.State, g.Clients, len(g.Instances))
	}
	w.Flush()
	for _, g := range groups {
		fmt.Fprintf(stdout, "\n%s:\n", g.Name)
		for _, h := range g.Instances {
			fmt.Fprintf(stdout, "  %s  %s, %s", h.Key, h.State, plural(h.Clients, "client"))
			if h.Pid > 0 {
				fmt.Fprintf(stdout, ", pid %d", h.Pid)
			}
			fmt.Fprintf(stdout, ": %s\n", instanceWords(h))
			if h.Gate != nil {
				fmt.Fprintf(stdout, "  %s  %s\n", h.Key, gateWords(h.Sharing, h.Gate))
			}
		}
		for _, h := range g.Stopped {
			fmt.Fprintf(stdout, "  %s  stopped, catalogued: %s\n", h.Key, dash(h.Shape))
		}
	}
	return 0
}

// instanceWords says what an instance runs and for whom: what tells it
// apart from the others of its name when it has any, else its command,
// directory and clients' shape; never a variable's value.
func instanceWords(h hosted.Status) string {
	var parts []string
	if len(h.Entries) > 1 {
		parts = append(parts, "named "+strings.Join(h.Entries, ", "))
	}
	if h.Differs != "" {
		return strings.Join(append(parts, h.Differs), "; ")
	}
	parts = append(parts, h.Server)
	if h.Scope != "" {
		parts = append(parts, "in "+h.Scope)
	}
	if len(h.EnvNames) > 0 {
		parts = append(parts, "variables "+strings.Join(h.EnvNames, ","))
	}
	if len(h.HeaderNames) > 0 {
		parts = append(parts, "headers "+strings.Join(h.HeaderNames, ","))
	}
	if a, ok := h.Auth.(map[string]any); ok {
		// Where its sign-in stands (a remote server): never a token.
		if st, _ := a["state"].(string); st != "" && st != "none" {
			if iss, _ := a["issuer"].(string); iss != "" && st == "signed-in" {
				st += " at " + iss
			}
			parts = append(parts, st)
		}
	}
	if h.Shape != "" {
		parts = append(parts, "for "+h.Shape)
	}
	return strings.Join(parts, "; ")
}

// namesHosted reports whether q names h as hearthd servers takes a name:
// its name, a name its clients' entries give it, its label, or a key
// prefix of 4 hex digits or more.
func namesHosted(h hosted.Status, q string) bool {
	if q == h.Name || q == h.Server {
		return true
	}
	for _, e := range h.Entries {
		if e == q {
			return true
		}
	}
	return len(q) >= 4 && strings.HasPrefix(h.Key, q) && strings.Trim(q, "0123456789abcdef") == ""
}
