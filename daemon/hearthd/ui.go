package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/daemon"
	"github.com/hearth-mcp/hearth/pkg/config"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
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
	opener := openerCommand(settings.Getenv("HEARTH_OPEN_URL"), runtime.GOOS)
	cmd := exec.Command(opener[0], append(opener[1:], res.URL)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "hearthd ui: %s: %v; open this link (it works once) yourself:\n%s\n", opener[0], err, res.URL)
		return 1
	}
	// An opener such as xdg-open hands the link over and exits; a browser
	// named directly may run on: it is left to run.
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			fmt.Fprintf(stderr, "hearthd ui: %s failed: %v; open this link (it works once) yourself:\n%s\n", strings.Join(opener, " "), err, res.URL)
			return 1
		}
	case <-time.After(5 * time.Second):
	}
	fmt.Fprintf(stdout, "opened the status page with %s (the link works once: run hearthd ui again for another tab)\n", opener[0])
	return 0
}

// openerCommand is the command that opens a link: the setting's words
// (split at spaces), else the system's opener.
func openerCommand(setting, goos string) []string {
	if f := strings.Fields(setting); len(f) > 0 {
		return f
	}
	switch goos {
	case "darwin":
		return []string{"open"}
	case "windows":
		return []string{"rundll32", "url.dll,FileProtocolHandler"}
	}
	return []string{"xdg-open"}
}
