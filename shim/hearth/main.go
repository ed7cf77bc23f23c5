// Command hearth is the stdio shim MCP clients launch: it connects the
// client to the user's one warm hearthd (starting it if needed) and hands
// the client's stdin and stdout to it, or relays frames where it cannot.
// Configure your client to run `hearth` with no arguments.
package main

import (
	"fmt"
	"os"

	"github.com/hearth-mcp/hearth/pkg/portable"
	"github.com/hearth-mcp/hearth/pkg/version"
	"github.com/hearth-mcp/hearth/shim"
)

const usage = `usage: hearth
       hearth run [--share global|directory|client|exclusive] [--env A,B] COMMAND [ARGS...]
       hearth run [--share MODE] [--env A,B] -- COMMAND [ARGS...]
       hearth run [--share MODE] [--env A,B] NAME

Connects an MCP client on stdin/stdout to the hearth daemon that serves your
data directory (~/.local/share/hearth, or $HEARTH_HOME), starting one if none
does. It hands its stdin and stdout to the daemon, which then reads and writes
them itself; where it cannot (a terminal, or HEARTH_SHIM_RELAY=1) it relays
the frames. Run it from your MCP client's config with no arguments.

  HEARTH_NO_AUTOSTART=1  never start a daemon; fail if none serves
  HEARTH_DAEMON=PATH     the hearthd to start (default: beside hearth, else on PATH)
  HEARTH_SHIM_RELAY=1    relay frames instead of handing stdin and stdout over
  HEARTH_PORTABLE=1      run the mechanisms other systems run (relay; no client environment from /proc)

hearth run [--share MODE] [--env A,B] COMMAND ARGS (or NAME) connects the
client to another stdio MCP server, which the daemon runs once for every client
(COMMAND inline, or NAME, a [servers.NAME] table of the config file; a word that
is a configured name with no arguments is that server, and -- before COMMAND
says it is a command whatever the config defines). The server
gets a fixed base environment and the variables the client's entry set: those
--env (or HEARTH_RUN_ENV=A,B) names, else those the client's own environment
lacks. See the README, "Hosting your other MCP servers".

The daemon's settings are its config file's (~/.config/hearth/config.toml),
not this process's environment. See hearthd status for the daemon.
`

func main() {
	// The portability switches, read here and nowhere else below.
	sw := portable.Read(os.Getenv)
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "version", "--version":
			fmt.Println("hearth", version.Tooling())
			os.Exit(0)
		case "help", "-h", "--help":
			fmt.Print(usage)
			os.Exit(0)
		case "run":
			parent, known := shim.ParentEnv(sw.NoParentEnv)
			run, err := shim.ParseRun(os.Args[2:], os.Environ(), parent, known)
			if err != nil {
				fmt.Fprintf(os.Stderr, "hearth: %v\n", err)
				os.Exit(2)
			}
			os.Exit(shim.Run(shim.Options{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Run: run, Relay: sw.ShimRelay}))
		default:
			fmt.Fprintf(os.Stderr, "hearth: unexpected argument %q (hearth takes none; see hearth --help)\n", os.Args[1])
			os.Exit(2)
		}
	}
	os.Exit(shim.Run(shim.Options{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Relay: sw.ShimRelay}))
}
