// Command hearth is the stdio shim MCP clients launch: it connects the
// client to the user's one warm hearthd (starting it if needed) and relays
// frames both ways. Configure your client to run `hearth` with no arguments.
package main

import (
	"fmt"
	"os"

	"github.com/hearth-mcp/hearth/pkg/version"
	"github.com/hearth-mcp/hearth/shim"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "version", "--version":
			fmt.Println("hearth", version.Tooling())
			os.Exit(0)
		case "help", "-h", "--help":
			fmt.Print("usage: hearth\n\nRelays MCP frames between stdin/stdout and the hearth daemon, starting it if needed.\n" +
				"Set HEARTH_NO_AUTOSTART=1 to never start one, HEARTH_DAEMON to name the hearthd binary.\n")
			os.Exit(0)
		default:
			fmt.Fprintf(os.Stderr, "hearth: unexpected argument %q (hearth takes none; see hearth --help)\n", os.Args[1])
			os.Exit(2)
		}
	}
	os.Exit(shim.Run(shim.Options{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}))
}
