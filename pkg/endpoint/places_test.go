package endpoint

import (
	"strings"
	"testing"
)

// The socket's directory and the home on every system, decided from the
// environment alone, so Windows's answers are checked here on any system.
func envOf(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func TestSocketDirPerSystem(t *testing.T) {
	for _, c := range []struct {
		name       string
		goos       string
		env        map[string]string
		runtimeDir string
		account    string
		want       string // "" with bad: refused
		bad        string
	}{
		{"linux: runtime dir", "linux", nil, "/run/user/1000", "/home/me", "/run/user/1000/hearth", ""},
		{"linux: no runtime dir", "linux", nil, "", "/home/me", "/tmp/hearth-1000", ""},
		{"darwin: TMPDIR", "darwin", nil, "", "/Users/me", "/tmp/hearth-1000", ""},
		{"windows: LOCALAPPDATA", "windows", map[string]string{"LOCALAPPDATA": `C:\Users\me\AppData\Local`, "USERPROFILE": `C:\Users\me`}, "", "", `C:\Users\me\AppData\Local\hearth`, ""},
		{"windows: LOCALAPPDATA with a trailing separator", "windows", map[string]string{"LOCALAPPDATA": `D:\Data\`}, "", "", `D:\Data\hearth`, ""},
		{"windows: LOCALAPPDATA with forward slashes", "windows", map[string]string{"LOCALAPPDATA": `c:/Users/me/AppData/Local`}, "", "", `c:/Users/me/AppData/Local\hearth`, ""},
		{"windows: relative LOCALAPPDATA, the profile", "windows", map[string]string{"LOCALAPPDATA": `AppData\Local`, "USERPROFILE": `C:\Users\me`}, "", "", `C:\Users\me\AppData\Local\hearth`, ""},
		{"windows: no LOCALAPPDATA, the profile", "windows", map[string]string{"USERPROFILE": `C:\Users\me`}, "", "", `C:\Users\me\AppData\Local\hearth`, ""},
		{"windows: a UNC profile", "windows", map[string]string{"USERPROFILE": `\\srv\home\me`}, "", "", `\\srv\home\me\AppData\Local\hearth`, ""},
		{"windows: only HOME", "windows", map[string]string{"HOME": `C:\Users\me`}, "", "", `C:\Users\me\AppData\Local\hearth`, ""},
		{"windows: an MSYS HOME is not absolute", "windows", map[string]string{"HOME": "/c/Users/me"}, "", `C:\Users\me`, `C:\Users\me\AppData\Local\hearth`, ""},
		{"windows: the runtime dir is Unix's", "windows", map[string]string{"LOCALAPPDATA": `C:\L`}, "/run/user/1000", "", `C:\L\hearth`, ""},
		{"windows: nothing", "windows", nil, "", "", "", "LOCALAPPDATA"},
	} {
		got, err := SocketDir(c.goos, envOf(c.env), c.runtimeDir, "/tmp", 1000, c.account)
		switch {
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
			t.Errorf("%s: %q, %v; want a refusal naming %s", c.name, got, err, c.bad)
		case c.bad == "" && (err != nil || got != c.want):
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func TestUserHomePerSystem(t *testing.T) {
	for _, c := range []struct {
		goos    string
		env     map[string]string
		account string
		want    string
	}{
		{"linux", map[string]string{"HOME": "/home/me/", "USERPROFILE": `C:\x`}, "/home/other", "/home/me"},
		{"linux", map[string]string{"HOME": "rel"}, "/home/acct", "/home/acct"},
		{"darwin", nil, "/Users/me", "/Users/me"},
		// Every client passes USERPROFILE; HOME only from some shells.
		{"windows", map[string]string{"USERPROFILE": `C:\Users\me`, "HOME": `D:\elsewhere`}, "", `C:\Users\me`},
		{"windows", map[string]string{"USERPROFILE": `C:\Users\me\`}, "", `C:\Users\me`},
		{"windows", map[string]string{"HOME": `D:\home`}, `C:\Users\acct`, `D:\home`},
		{"windows", map[string]string{"HOME": "/c/Users/me"}, `C:\Users\acct`, `C:\Users\acct`},
		{"windows", nil, "", ""},
	} {
		if got := userHomeOn(c.goos, envOf(c.env), c.account); got != c.want {
			t.Errorf("%s %v: %q, want %q", c.goos, c.env, got, c.want)
		}
	}
}
