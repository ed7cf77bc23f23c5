package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/deploy/launchd"
	"github.com/hearth-mcp/hearth/deploy/systemd"
)

// installedService reads the definition install-service wrote, for each
// system, from a home of the test's own: none, this binary, another
// binary, a missing binary, and a file that is not a definition.
func TestInstalledService(t *testing.T) {
	home := t.TempDir()
	bin := filepath.Join(home, "bin")
	os.MkdirAll(bin, 0o755)
	self := filepath.Join(bin, "hearthd")
	other := filepath.Join(bin, "hearthd-old")
	for _, p := range []string{self, other} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(bin, "hearthd-link")
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	write := func(goos, program string) {
		t.Helper()
		var path, content string
		switch goos {
		case "darwin":
			a, err := launchd.Render(program, home)
			if err != nil {
				t.Fatal(err)
			}
			path, content = a.Path, a.Content
		case "linux":
			units, err := systemd.Render(program)
			if err != nil {
				t.Fatal(err)
			}
			path = filepath.Join(home, ".config", "systemd", "user", "hearthd.service")
			for _, u := range units {
				if u.Name == "hearthd.service" {
					content = u.Content
				}
			}
		}
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, goos := range []string{"linux", "darwin"} {
		if got := installedService(goos, getenv, self); !strings.HasPrefix(got, "none installed") {
			t.Errorf("%s, nothing installed: %q", goos, got)
		}
		for _, c := range []struct {
			program, want string
		}{
			{self, "starts " + self},
			{link, "starts " + link},
			{other, "not this hearthd (" + self + ")"},
			{filepath.Join(bin, "gone"), "which is missing"},
		} {
			write(goos, c.program)
			got := installedService(goos, getenv, self)
			if !strings.Contains(got, c.want) || (c.program == self && strings.Contains(got, "not this")) {
				t.Errorf("%s, service starting %s: %q, want it to say %q", goos, c.program, got, c.want)
			}
		}
	}
	os.WriteFile(filepath.Join(home, "Library", "LaunchAgents", launchd.Label+".plist"), []byte("not a plist"), 0o644)
	if got := installedService("darwin", getenv, self); !strings.Contains(got, "unreadable") {
		t.Errorf("a broken plist: %q", got)
	}
	if got := installedService("windows", getenv, self); !strings.Contains(got, "not available on windows") {
		t.Errorf("windows: %q", got)
	}
	if got := installedService("linux", func(string) string { return "" }, self); !strings.Contains(got, "no absolute HOME") {
		t.Errorf("no HOME: %q", got)
	}
}
