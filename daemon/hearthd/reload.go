package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hearth-mcp/hearth/daemon"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
)

// reloadCmd is `hearthd reload`: the daemon serving this data directory
// reads its config file again (as SIGHUP makes it), and says whether that
// applied. It exits 0 when it did, 1 with the reason (the file and its
// line) when it did not or no daemon serves; a reload that did not apply
// is also listed by `hearthd status` until one does.
func reloadCmd(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "usage: hearthd reload (the daemon serving this data directory reads its config file again)")
		return 2
	}
	home, err := endpoint.Home(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd reload:", err)
		return 1
	}
	socket, owned, err := statusSocket(home, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd reload:", err)
		return 1
	}
	if _, err := daemonRequest(socket, statusClientName, daemon.ReloadMethod, map[string]any{}, 30*time.Second); err != nil {
		var refused *replyError
		if errors.As(err, &refused) {
			fmt.Fprintln(stderr, "hearthd reload: the reload did not apply, the previous settings keep serving:", refused.message)
			return 1
		}
		fmt.Fprintln(stderr, "hearthd reload:", noneServes(home, socket, owned, err))
		return 1
	}
	fmt.Fprintln(stdout, "reloaded: the daemon serves the config file as it is now")
	return 0
}
