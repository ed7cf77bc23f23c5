package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/hearth-mcp/hearth/deploy/launchd"
	"github.com/hearth-mcp/hearth/pkg/atomicfile"
)

// installLaunchAgent writes ~/Library/LaunchAgents/dev.hearth.hearthd.plist
// naming the hearthd at self, then loads it into the user's GUI session
// with launchctl (bootout first, so a second install replaces the first).
// Not run on a Mac here: the plist is tested on Linux (deploy/launchd).
func installLaunchAgent(self string, dryRun bool, stdout, stderr io.Writer) int {
	home, err := os.UserHomeDir()
	if err != nil {
		fmt.Fprintln(stderr, "hearthd install-service: no home directory:", err)
		return 1
	}
	agent, err := launchd.Render(self, home)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd install-service:", err)
		return 1
	}
	if dryRun {
		fmt.Fprintf(stdout, "# %s\n%s", agent.Path, agent.Content)
		return 0
	}
	if err := os.MkdirAll(filepath.Dir(agent.Path), 0o755); err != nil {
		fmt.Fprintln(stderr, "hearthd install-service:", err)
		return 1
	}
	if err := os.MkdirAll(filepath.Join(home, "Library", "Logs"), 0o755); err != nil {
		fmt.Fprintln(stderr, "hearthd install-service:", err)
		return 1
	}
	if err := atomicfile.Write(agent.Path, []byte(agent.Content), 0o644); err != nil {
		fmt.Fprintln(stderr, "hearthd install-service:", err)
		return 1
	}
	fmt.Fprintln(stdout, "wrote", agent.Path)
	domain := "gui/" + strconv.Itoa(os.Getuid())
	launchctl, err := exec.LookPath("launchctl")
	if err != nil {
		fmt.Fprintf(stdout, "launchctl not found: load the agent yourself with `launchctl bootstrap %s %s`\n", domain, agent.Path)
		return 0
	}
	_ = exec.Command(launchctl, "bootout", domain+"/"+launchd.Label).Run() // not loaded yet is fine
	if out, err := systemTool(launchctl, "bootstrap", domain, agent.Path); err != nil {
		fmt.Fprintf(stderr, "hearthd install-service: launchctl bootstrap %s %s failed: %v\n%s", domain, agent.Path, err, out)
		return 1
	}
	fmt.Fprintf(stdout, "loaded %s into %s: hearthd starts at login and again if it fails\n", launchd.Label, domain)
	return 0
}
