package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hearth-mcp/hearth/deploy/launchd"
	"github.com/hearth-mcp/hearth/deploy/systemd"
)

// installedService says, for `hearthd status`, whether this user has the
// service definition `hearthd install-service` writes on goos (a systemd
// user unit, a LaunchAgent) and whether it starts this hearthd (self): an
// upgrade to another path leaves the service running the old binary, and a
// removed binary leaves a service that fails at every login. It only reads
// files, so it is the same on every system and tested on Linux.
func installedService(goos string, getenv func(string) string, self string) string {
	home := getenv("HOME")
	var path, program string
	var err error
	switch serviceManager(goos) {
	case "launchd":
		if !filepath.IsAbs(home) {
			return "unknown: no absolute HOME"
		}
		path = filepath.Join(home, "Library", "LaunchAgents", launchd.Label+".plist")
		var b []byte
		if b, err = os.ReadFile(path); err == nil {
			program, err = launchd.Program(b)
		}
	case "systemd":
		dir := getenv("XDG_CONFIG_HOME")
		if !filepath.IsAbs(dir) {
			if !filepath.IsAbs(home) {
				return "unknown: no absolute HOME"
			}
			dir = filepath.Join(home, ".config")
		}
		path = filepath.Join(dir, "systemd", "user", "hearthd.service")
		var b []byte
		if b, err = os.ReadFile(path); err == nil {
			program, err = systemd.Program(string(b))
		}
	default:
		return fmt.Sprintf("none: install-service is not available on %s", goos)
	}
	shown := tilde(path, home)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "none installed (`hearthd install-service` starts hearthd at login)"
	case err != nil:
		return fmt.Sprintf("%s: unreadable: %v", shown, err)
	}
	if _, err := os.Stat(program); err != nil {
		return fmt.Sprintf("%s starts %s, which is missing: run `hearthd install-service` again", shown, program)
	}
	if self != "" && !sameFile(program, self) {
		return fmt.Sprintf("%s starts %s, not this hearthd (%s): run `hearthd install-service` to switch", shown, program, self)
	}
	return fmt.Sprintf("%s starts %s", shown, program)
}

// sameFile: a and b name one file (a symbolic link to the binary counts).
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
