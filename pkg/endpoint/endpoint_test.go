//go:build unix

package endpoint

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

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
		{map[string]string{"XDG_DATA_HOME": "/d", "HOME": "/home/u"}, "/home/u/.local/share/hearth", false},
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

// The user's own default data directory keeps the well-known socket name
// (systemd's socket unit listens there); any other data directory gets a
// name of its own, so two never contend for one socket.
func TestSocketNamePerDataDirectory(t *testing.T) {
	if got := SocketName("/home/u/.local/share/hearth", "/home/u"); got != "hearthd.sock" {
		t.Fatalf("default: %s", got)
	}
	a, b := SocketName("/tmp/a/.local/share/hearth", "/home/u"), SocketName("/srv/hearth", "/home/u")
	if a == b || !strings.HasPrefix(a, "hearthd-") || !strings.HasSuffix(a, ".sock") {
		t.Fatalf("other data directories: %s %s", a, b)
	}
	if SocketName("/srv/hearth/", "/home/u") != b {
		t.Fatal("the name depends on a trailing slash")
	}
	if SocketName("/home/u/.local/share/hearth", "") == "hearthd.sock" {
		t.Fatal("without the account's home every data directory is hashed")
	}
	for socket, ready := range map[string]string{"/r/hearth/hearthd.sock": "hearthd.ready", "/r/hearth/hearthd-0a1b2c.sock": "hearthd-0a1b2c.ready", "/tmp/mcp.sock": "hearthd.ready"} {
		if got := ReadyName(socket); got != ready {
			t.Errorf("ReadyName(%s) = %s, want %s", socket, got, ready)
		}
	}
}

// userHome comes from the account database, not $HOME.
func TestUserHomeFromPasswd(t *testing.T) {
	f := filepath.Join(t.TempDir(), "passwd")
	uid := strconv.Itoa(os.Getuid())
	os.WriteFile(f, []byte("other:x:12345:1::/home/other:/bin/sh\nme:x:"+uid+":"+uid+"::/home/me:/bin/zsh\n"), 0o644)
	old, oldDir := passwdFile, directoryAccount
	passwdFile, directoryAccount = f, nil
	defer func() { passwdFile, directoryAccount = old, oldDir }()
	t.Setenv("HOME", "/elsewhere")
	if got := userHome(); got != "/home/me" {
		t.Fatalf("userHome = %q", got)
	}
	if name, shell := Account(); name != "me" || shell != "/bin/zsh" {
		t.Fatalf("Account = %q %q", name, shell)
	}
	p, _, err := SocketPath(envOf(map[string]string{"HOME": "/home/me", "XDG_RUNTIME_DIR": "/r"}))
	if err != nil || p != "/r/hearth/hearthd.sock" {
		t.Fatalf("default home: %q %v", p, err)
	}
	p, _, _ = SocketPath(envOf(map[string]string{"HOME": "/tmp/test-home", "XDG_RUNTIME_DIR": "/r"}))
	if p == "/r/hearth/hearthd.sock" {
		t.Fatal("another HOME got the default socket")
	}
}

// One data directory, config file and state directory per user whatever
// XDG variables a client keeps or drops: a client that passes its
// server XDG_DATA_HOME, XDG_CONFIG_HOME and XDG_STATE_HOME resolves the
// same places as one that passes only HOME
// (docs/decisions/0029-one-place-per-user.md).
func TestPlacesIgnoreXDG(t *testing.T) {
	trimmed := envOf(map[string]string{"HOME": "/home/u"})
	full := envOf(map[string]string{"HOME": "/home/u", "XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s", "XDG_RUNTIME_DIR": "/r"})
	for _, getenv := range []Getenv{trimmed, full} {
		if h, err := HomePlace(getenv); err != nil || h.Path != "/home/u/.local/share/hearth" || h.Why != WhyAccountData {
			t.Errorf("HomePlace = %+v, %v", h, err)
		}
		if c, named, err := ConfigPlace(getenv); err != nil || named || c.Path != "/home/u/.config/hearth/config.toml" || c.Why != WhyAccountConf {
			t.Errorf("ConfigPlace = %+v, %v, %v", c, named, err)
		}
		if s, err := StateDir(getenv); err != nil || s != "/home/u/.local/state/hearth" {
			t.Errorf("StateDir = %q, %v", s, err)
		}
	}
	// Only an explicit variable chooses another place.
	if h, _ := HomePlace(envOf(map[string]string{"HOME": "/home/u", "HEARTH_HOME": "/srv/h"})); h.Path != "/srv/h" || h.Why != WhyHearthHome {
		t.Errorf("HEARTH_HOME: %+v", h)
	}
	if c, named, _ := ConfigPlace(envOf(map[string]string{"HOME": "/home/u", ConfigVar: "/etc/h.toml"})); c.Path != "/etc/h.toml" || !named || c.Why != WhyConfigVar {
		t.Errorf("HEARTH_CONFIG: %+v", c)
	}
}

// Without HOME, the account's home from the account database.
func TestUserHomeWithoutHOME(t *testing.T) {
	f := filepath.Join(t.TempDir(), "passwd")
	uid := strconv.Itoa(os.Getuid())
	os.WriteFile(f, []byte("me:x:"+uid+":"+uid+"::/home/me:/bin/sh\n"), 0o644)
	old := passwdFile
	passwdFile = f
	defer func() { passwdFile = old }()
	if h, err := Home(envOf(nil)); err != nil || h != "/home/me/.local/share/hearth" {
		t.Fatalf("Home without HOME = %q, %v", h, err)
	}
}

// The XDG places an older hearth followed, when they hold something, are
// named so the user can move them.
func TestUnfollowed(t *testing.T) {
	home, xdgData, xdgConf := t.TempDir(), t.TempDir(), t.TempDir()
	env := envOf(map[string]string{"HOME": home, "XDG_DATA_HOME": xdgData, "XDG_CONFIG_HOME": xdgConf})
	if got := Unfollowed(env); len(got) != 0 {
		t.Fatalf("nothing there yet: %q", got)
	}
	os.MkdirAll(filepath.Join(xdgData, "hearth"), 0o700)
	os.MkdirAll(filepath.Join(xdgConf, "hearth"), 0o700)
	os.WriteFile(filepath.Join(xdgConf, "hearth", "config.toml"), nil, 0o600)
	got := strings.Join(Unfollowed(env), "\n")
	for _, want := range []string{filepath.Join(xdgData, "hearth") + " (from XDG_DATA_HOME)", filepath.Join(home, ".local", "share", "hearth"),
		filepath.Join(xdgConf, "hearth", "config.toml") + " (from XDG_CONFIG_HOME) is not read", filepath.Join(home, ".config", "hearth", "config.toml")} {
		if !strings.Contains(got, want) {
			t.Errorf("Unfollowed lacks %q:\n%s", want, got)
		}
	}
}

// A directory open to others is narrowed to 0700 (and says from what); a
// file in the way is refused.
func TestPrivateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "open")
	os.Mkdir(dir, 0o755)
	os.Chmod(dir, 0o755)
	if was, err := PrivateDir(dir); err != nil || was != 0o755 {
		t.Fatalf("PrivateDir = %#o, %v", was, err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("mode after: %#o", fi.Mode().Perm())
	}
	if was, err := PrivateDir(dir); err != nil || was != 0 {
		t.Fatalf("already private: %#o, %v", was, err)
	}
	fresh := filepath.Join(t.TempDir(), "a", "b")
	if _, err := PrivateDir(fresh); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o700 {
		t.Fatalf("created %#o", fi.Mode().Perm())
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	if _, err := PrivateDir(file); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("a file: %v", err)
	}
}

// OwnFile refuses a file another user owns or may change (or read, when
// it holds a secret), or one in a directory another user may change; a
// sticky directory open to all (/tmp) is fine, and a symbolic link is
// judged by where it leads.
func TestOwnFile(t *testing.T) {
	root := os.Getuid() == 0
	for _, tc := range []struct {
		name      string
		fileMode  os.FileMode
		dirMode   os.FileMode
		fileOwner int // -1: the user
		dirOwner  int
		secret    bool
		link      bool // reached through a link in a private directory
		want      string
	}{
		{"private", 0o600, 0o700, -1, -1, true, false, ""},
		{"readable config", 0o644, 0o755, -1, -1, false, false, ""},
		{"sticky open directory", 0o644, os.ModeSticky | 0o777, -1, -1, false, false, ""},
		{"group-writable file", 0o664, 0o755, -1, -1, false, false, "has mode 0664: other users could write it; run chmod go-w"},
		{"world-writable file", 0o646, 0o755, -1, -1, false, false, "has mode 0646"},
		{"readable secret", 0o644, 0o700, -1, -1, true, false, "has mode 0644: other users could read it; run chmod 600"},
		{"group-writable directory", 0o644, 0o775, -1, -1, false, false, "which has mode 0775: other users could replace what is in it"},
		{"world-writable directory", 0o644, 0o777, -1, -1, false, false, "which has mode 0777"},
		{"link to a writable file", 0o666, 0o755, -1, -1, false, true, "has mode 0666"},
		{"link into a writable directory", 0o644, 0o777, -1, -1, false, true, "which has mode 0777"},
		{"another user's file", 0o644, 0o755, 65534, -1, false, false, "belongs to uid 65534, not to you"},
		{"another user's directory", 0o644, 0o755, -1, 65534, false, false, "which belongs to uid 65534, neither you"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if (tc.fileOwner >= 0 || tc.dirOwner >= 0) && !root {
				t.Skip("giving a file to another user needs root")
			}
			base := t.TempDir()
			dir := filepath.Join(base, "d")
			os.Mkdir(dir, 0o700)
			path := filepath.Join(dir, "f")
			if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Chmod(path, tc.fileMode)
			os.Chmod(dir, tc.dirMode)
			if tc.fileOwner >= 0 {
				os.Chown(path, tc.fileOwner, -1)
			}
			if tc.dirOwner >= 0 {
				os.Chown(dir, tc.dirOwner, -1)
			}
			asked := path
			if tc.link {
				asked = filepath.Join(base, "link")
				os.Symlink(path, asked)
			}
			err := OwnFile(asked, tc.secret)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// A socket path of MaxSocketPath bytes binds and connects on this system
// (on macOS a path of Linux's 107 bytes would not), and SocketPath refuses
// one byte more rather than let bind truncate or refuse it.
func TestMaxSocketPathBinds(t *testing.T) {
	dir := t.TempDir()
	if len(dir)+2 > MaxSocketPath {
		t.Skipf("temporary directory %s is too long to build the path in", dir)
	}
	path := filepath.Join(dir, strings.Repeat("s", MaxSocketPath-len(dir)-1))
	if len(path) != MaxSocketPath {
		t.Fatalf("built a path of %d bytes, want %d", len(path), MaxSocketPath)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("bind a %d-byte path: %v", len(path), err)
	}
	defer ln.Close()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("connect to a %d-byte path: %v", len(path), err)
	}
	c.Close()
	if got, _, err := SocketPath(envOf(map[string]string{"MCP_SOCKET_PATH": path})); err != nil || got != path {
		t.Fatalf("SocketPath(%d bytes) = %q, %v", len(path), got, err)
	}
	if _, _, err := SocketPath(envOf(map[string]string{"MCP_SOCKET_PATH": path + "x"})); err == nil {
		t.Fatalf("SocketPath accepted %d bytes", len(path)+1)
	}
}
