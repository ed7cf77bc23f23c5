package main

import (
	"errors"
	"strings"
	"testing"
)

// adopt moves entries only where the shim serves; install-service knows a
// service manager only where it writes one. Both are decided by GOOS alone,
// so every system's answer is checked here, on any system.
func TestPlatformDecisions(t *testing.T) {
	for _, c := range []struct {
		goos    string
		adopt   bool
		service string
	}{
		{"linux", true, "systemd"},
		{"darwin", true, "launchd"},
		{"windows", true, ""},
		{"freebsd", false, ""},
		{"openbsd", false, ""},
		{"plan9", false, ""},
	} {
		why := adoptUnsupported(c.goos)
		if (why == "") != c.adopt {
			t.Errorf("adoptUnsupported(%s) = %q, want supported=%v", c.goos, why, c.adopt)
		}
		if why != "" && (!strings.Contains(why, "not supported on "+c.goos) || !strings.Contains(why, "nothing was changed")) {
			t.Errorf("adoptUnsupported(%s) = %q: does not say plainly that nothing changed", c.goos, why)
		}
		if got := serviceManager(c.goos); got != c.service {
			t.Errorf("serviceManager(%s) = %q, want %q", c.goos, got, c.service)
		}
	}
	// Where install-service installs nothing, it says why, and on Windows
	// what starts the daemon instead.
	if why := serviceUnsupported("windows"); !strings.Contains(why, "starts hearthd when a client first needs it") || !strings.Contains(why, "Startup-folder") {
		t.Errorf("serviceUnsupported(windows) = %q", why)
	}
	if why := serviceUnsupported("freebsd"); !strings.Contains(why, "not supported on freebsd") {
		t.Errorf("serviceUnsupported(freebsd) = %q", why)
	}
}

// The command moved entries run: "hearth" on Unix, hearth.exe's full path
// on Windows, beside hearthd.exe first, then on PATH.
func TestDefaultShim(t *testing.T) {
	beside := func(p string) bool { return p == `C:\Program Files\hearth\hearth.exe` }
	nowhere := func(string) bool { return false }
	onPath := func(string) (string, error) { return `C:\tools\hearth.exe`, nil }
	relPath := func(string) (string, error) { return `.\hearth.exe`, nil }
	notOnPath := func(string) (string, error) { return "", errors.New("not found") }
	for _, c := range []struct {
		goos, self string
		isFile     func(string) bool
		lookPath   func(string) (string, error)
		want       string
	}{
		{"linux", "/usr/bin/hearthd", beside, onPath, "hearth"},
		{"darwin", "/opt/homebrew/bin/hearthd", nowhere, notOnPath, "hearth"},
		{"windows", `C:\Program Files\hearth\hearthd.exe`, beside, onPath, `C:\Program Files\hearth\hearth.exe`},
		{"windows", `D:\other\hearthd.exe`, beside, onPath, `C:\tools\hearth.exe`},
		{"windows", `D:\other\hearthd.exe`, nowhere, relPath, "hearth.exe"},
		{"windows", `D:\other\hearthd.exe`, nowhere, notOnPath, "hearth.exe"},
		{"windows", "", nowhere, notOnPath, "hearth.exe"},
	} {
		if got := defaultShim(c.goos, c.self, c.isFile, c.lookPath); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.goos, c.self, got, c.want)
		}
	}
}
