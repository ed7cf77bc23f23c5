package main

import (
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
		{"windows", false, ""},
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
}
