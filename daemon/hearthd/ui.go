package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/hearth-mcp/hearth/daemon"
	"github.com/hearth-mcp/hearth/pkg/config"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/opener"
)

// uiCmd is `hearthd ui [--print]`: it asks the daemon serving this data
// directory for a one-time link to its status page (over the socket:
// $/hearth/ui, which no MCP client reaches) and opens it with the
// open_url setting's command (HEARTH_OPEN_URL over the config file's
// open_url; the system's opener by default), the link its last argument.
func uiCmd(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	printOnly := false
	for _, a := range args {
		switch a {
		case "--print":
			printOnly = true
		default:
			fmt.Fprintf(stderr, "hearthd ui: unexpected argument %q (usage: hearthd ui [--print])\n", a)
			return 2
		}
	}
	home, err := endpoint.Home(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd ui:", err)
		return 1
	}
	socket, owned, err := statusSocket(home, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd ui:", err)
		return 1
	}
	raw, err := daemonRequest(socket, statusClientName, daemon.UIMethod, map[string]any{}, 10*time.Second)
	var res struct{ URL string }
	if err == nil {
		err = json.Unmarshal(raw, &res)
	}
	if err != nil || res.URL == "" {
		if _, qerr := queryStatus(socket); qerr != nil {
			fmt.Fprintln(stderr, "hearthd ui:", noneServes(home, socket, owned, qerr))
			return 1
		}
		fmt.Fprintln(stderr, "hearthd ui: the daemon gave no link:", err)
		return 1
	}
	if printOnly {
		fmt.Fprintln(stdout, res.URL)
		return 0
	}
	settings, err := config.Load(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd ui:", err)
		return 2
	}
	argv, err := opener.Command(settings.Getenv(opener.Env), "", runtime.GOOS)
	if err != nil {
		fmt.Fprintf(stderr, "hearthd ui: %v; open this link (it works once) yourself:\n%s\n", err, res.URL)
		return 2
	}
	// An opener such as xdg-open hands the link over and exits; a browser
	// named directly may run on: after a few seconds it is left to run.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := opener.Open(ctx, argv, res.URL); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintf(stderr, "hearthd ui: %v; open this link (it works once) yourself:\n%s\n", err, res.URL)
		return 1
	}
	opened := argv[0]
	fmt.Fprintf(stdout, "opened the status page with %s (the link works once: run hearthd ui again for another tab)\n", opened)
	return 0
}
