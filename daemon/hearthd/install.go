package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/hearth-mcp/hearth/deploy/systemd"
	"github.com/hearth-mcp/hearth/pkg/atomicfile"
)

// serviceManager is what starts hearthd as a service on goos: systemd's
// user manager on Linux, launchd on macOS, "" where install-service is not
// implemented (docs/decisions/0044-platforms.md).
func serviceManager(goos string) string {
	switch goos {
	case "linux":
		return "systemd"
	case "darwin":
		return "launchd"
	}
	return ""
}

// serviceUnsupported says why install-service installs nothing on goos
// and what to do instead. On Windows nothing is needed: the shim starts
// hearthd when a client first needs it (detached, so it outlives that
// client) and the daemon exits when idle, so a Windows service, a
// Startup-folder shortcut or a scheduled task would only keep it running
// for nobody (docs/decisions/0047-windows-socket.md).
func serviceUnsupported(goos string) string {
	if goos == "windows" {
		return "there is no service to install on windows, and none is needed: the shim `hearth` starts hearthd when a client first needs it and hearthd exits when idle; " +
			"to keep one running anyway, run `hearthd serve` from a Startup-folder shortcut (docs/decisions/0047-windows-socket.md)"
	}
	return fmt.Sprintf("not supported on %s yet: hearth installs a systemd user service on Linux and a LaunchAgent on macOS (docs/decisions/0044-platforms.md)", goos)
}

// installService writes hearth's service definition for this system with
// this binary's absolute path and starts using it where it can: systemd
// user units (the socket enabled through `systemctl --user`), or a macOS
// LaunchAgent (launchd.go). (It runs systemctl or launchctl itself: a
// one-shot CLI step, not a tool's child, so it does not go through the tool
// supervisor.)
func installService(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("install-service", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dryRun := fs.Bool("dry-run", false, "print the service definition instead of writing it")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hearthd install-service: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		fmt.Fprintln(stderr, "hearthd install-service: cannot find this binary's path:", err)
		return 1
	}
	switch serviceManager(runtime.GOOS) {
	case "launchd":
		return installLaunchAgent(self, *dryRun, stdout, stderr)
	case "":
		fmt.Fprintln(stderr, "hearthd install-service:", serviceUnsupported(runtime.GOOS))
		return 1
	}
	units, err := systemd.Render(self)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd install-service:", err)
		return 1
	}
	dir, err := unitDir()
	if err != nil {
		fmt.Fprintln(stderr, "hearthd install-service:", err)
		return 1
	}
	if *dryRun {
		for _, u := range units {
			fmt.Fprintf(stdout, "# %s\n%s\n", filepath.Join(dir, u.Name), u.Content)
		}
		return 0
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(stderr, "hearthd install-service:", err)
		return 1
	}
	for _, u := range units {
		path := filepath.Join(dir, u.Name)
		if err := atomicfile.Write(path, []byte(u.Content), 0o644); err != nil {
			fmt.Fprintln(stderr, "hearthd install-service:", err)
			return 1
		}
		fmt.Fprintln(stdout, "wrote", path)
	}
	systemctl, err := exec.LookPath("systemctl")
	if err != nil {
		fmt.Fprintln(stdout, "systemctl not found: enable the socket yourself with `systemctl --user enable --now hearthd.socket`")
		return 0
	}
	for _, step := range [][]string{{"--user", "daemon-reload"}, {"--user", "enable", "--now", "hearthd.socket"}} {
		out, err := systemTool(systemctl, step...)
		if err != nil {
			fmt.Fprintf(stderr, "hearthd install-service: systemctl %v failed: %v\n%s", step, err, out)
			fmt.Fprintln(stderr, "the units are written; enable them in a session with a user manager: systemctl --user enable --now hearthd.socket")
			return 1
		}
	}
	fmt.Fprintln(stdout, "enabled hearthd.socket: the daemon starts on the first connection")
	return 0
}

// unitDir is $XDG_CONFIG_HOME/systemd/user, else ~/.config/systemd/user.
func unitDir() (string, error) {
	if v := os.Getenv("XDG_CONFIG_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "systemd", "user"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("no XDG_CONFIG_HOME and no home directory")
	}
	return filepath.Join(home, ".config", "systemd", "user"), nil
}
