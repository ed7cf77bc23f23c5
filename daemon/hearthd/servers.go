package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/hearth-mcp/hearth/daemon"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
)

// serversCmd is `hearthd servers restart|stop|forget NAME`: it asks the daemon
// serving this data directory to restart or stop a hosted server, named as
// hearthd status shows it or by a key prefix; the daemon's refusal of a
// name that matches nothing, or several servers, lists what it could mean.
func serversCmd(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) != 2 || (args[0] != "restart" && args[0] != "stop" && args[0] != "forget") {
		fmt.Fprintln(stderr, "usage: hearthd servers restart|stop|forget NAME|KEY (forget drops what the catalog holds of it, so that its next client waits for it to start) (a server's name as hearthd status shows it: its [servers.NAME], or the package, image or script it runs; or 4 or more hex digits that begin its key)")
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
