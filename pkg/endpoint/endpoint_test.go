//go:build unix

package endpoint

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func envOf(m map[string]string) Getenv { return func(k string) string { return m[k] } }

// withRuntimeBase points /run/user at a temporary directory for one test.
func withRuntimeBase(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	old := userRuntimeBase
	userRuntimeBase = base
	t.Cleanup(func() { userRuntimeBase = old })
	return base
}

func TestSocketPathOrder(t *testing.T) {
	base := withRuntimeBase(t)
	uidDir := filepath.Join(base, strconv.Itoa(os.Getuid()))
	tmpDefault := filepath.Join(os.TempDir(), "hearth-"+strconv.Itoa(os.Getuid()), "hearthd.sock")

	// No XDG_RUNTIME_DIR and no /run/user/<uid>: the /tmp fallback.
	if p, ours, err := SocketPath(envOf(nil)); err != nil || p != tmpDefault || !ours {
		t.Fatalf("fallback: %q %v %v", p, ours, err)
	}
	// The user's runtime directory, found without XDG_RUNTIME_DIR.
	if err := os.Mkdir(uidDir, 0o700); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(uidDir, "hearth", "hearthd.sock")
	if p, ours, err := SocketPath(envOf(nil)); err != nil || p != want || !ours {
		t.Fatalf("runtime dir: %q %v %v, want %q", p, ours, err, want)
	}
	// XDG_RUNTIME_DIR, when set, wins; MCP_SOCKET_PATH wins over both.
	if p, _, _ := SocketPath(envOf(map[string]string{"XDG_RUNTIME_DIR": "/x"})); p != "/x/hearth/hearthd.sock" {
		t.Fatalf("XDG_RUNTIME_DIR: %q", p)
	}
	if p, ours, _ := SocketPath(envOf(map[string]string{"XDG_RUNTIME_DIR": "/x", "MCP_SOCKET_PATH": "/y/s.sock"})); p != "/y/s.sock" || ours {
		t.Fatalf("MCP_SOCKET_PATH: %q %v", p, ours)
	}
}

// A /run/user/<uid> that others can enter, or that is a symlink, is not used.
func TestRuntimeDirRefusesUnsafe(t *testing.T) {
	base := withRuntimeBase(t)
	uidDir := filepath.Join(base, strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(uidDir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(uidDir, 0o755)
	if d := RuntimeDir(envOf(nil)); d != "" {
		t.Fatalf("open directory used: %q", d)
	}
	os.Remove(uidDir)
	real := t.TempDir()
	os.Chmod(real, 0o700)
	if err := os.Symlink(real, uidDir); err != nil {
		t.Fatal(err)
	}
	if d := RuntimeDir(envOf(nil)); d != "" {
		t.Fatalf("symlink used: %q", d)
	}
}

func TestHome(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
		bad  bool
	}{
		{map[string]string{"HEARTH_HOME": "/srv/h/"}, "/srv/h", false},
		{map[string]string{"HEARTH_HOME": "rel"}, "", true},
		{map[string]string{"XDG_DATA_HOME": "/d", "HOME": "/home/u"}, "/d/hearth", false},
		{map[string]string{"XDG_DATA_HOME": "rel", "HOME": "/home/u"}, "/home/u/.local/share/hearth", false},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.local/share/hearth", false},
	}
	for _, c := range cases {
		got, err := Home(envOf(c.env))
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("Home(%v) = %q, %v; want %q (error %v)", c.env, got, err, c.want, c.bad)
		}
	}
}
