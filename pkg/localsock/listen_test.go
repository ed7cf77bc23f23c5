//go:build linux

package localsock

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var private = Options{Private: true}

// socketPath is hearth's own socket in a directory Listen is to create: a
// short path, for sun_path's 108 bytes.
func socketPath(t *testing.T) string {
	return filepath.Join(shortDir(t), "hearth", "hearthd.sock")
}

func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ls")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestListenPermissions(t *testing.T) {
	path := socketPath(t)
	ln, err := Listen(path, private)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Remove()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v", fi.Mode())
	}
	di, _ := os.Stat(filepath.Dir(path))
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("directory mode %v", di.Mode())
	}
}

func TestListenSocketModeOverride(t *testing.T) {
	path := socketPath(t)
	ln, err := Listen(path, Options{Private: true, Mode: 0o660})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Remove()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o660 {
		t.Fatalf("mode %v", fi.Mode())
	}
}

func TestListenTightensOurDirectory(t *testing.T) {
	path := socketPath(t)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	ln, err := Listen(path, private)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Remove()
	if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
		t.Fatalf("directory left at %v", di.Mode())
	}
}

func TestListenRefusesForeignDirectory(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to chown a directory to another user")
	}
	path := socketPath(t)
	dir := filepath.Dir(path)
	os.MkdirAll(dir, 0o700)
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := Listen(path, private)
	if err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Fatalf("want refusal, got %v", err)
	}
}

func TestListenRefusesSymlinkDirectory(t *testing.T) {
	path := socketPath(t)
	dir := filepath.Dir(path)
	os.Symlink(t.TempDir(), dir)
	if _, err := Listen(path, private); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("want refusal, got %v", err)
	}
}

func TestListenSingleInstance(t *testing.T) {
	path := socketPath(t)
	first, err := Listen(path, private)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Listen(path, private)
	if !errors.Is(err, ErrAlreadyRunning) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second listen: %v", err)
	}
	first.Remove()
	again, err := Listen(path, private)
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	again.Remove()
}

func TestListenRemovesStaleSocket(t *testing.T) {
	path := socketPath(t)
	os.MkdirAll(filepath.Dir(path), 0o700)
	// A socket file nobody serves, as a crashed daemon leaves it.
	stale, err := Listen(path, private)
	if err != nil {
		t.Fatal(err)
	}
	stale.Close()
	stale.lock.Close()
	ln, err := Listen(path, private)
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	ln.Remove()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("socket not unlinked on close: %v", err)
	}
}

func TestListenKeepsNonSocket(t *testing.T) {
	path := socketPath(t)
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte("precious"), 0o600)
	if _, err := Listen(path, private); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("want refusal, got %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious" {
		t.Fatal("a regular file was replaced")
	}
}

// An explicit MCP_SOCKET_PATH may be in a shared directory only where no
// other user can replace the socket.
func TestListenChecksAnExplicitDirectory(t *testing.T) {
	base := shortDir(t)
	cases := []struct {
		name string
		mode os.FileMode
		uid  int
		want string // "" accepted
	}{
		{"own 0700", 0o700, -1, ""},
		{"sticky and world-writable (like /tmp)", 0o777 | os.ModeSticky, -1, ""},
		{"world-writable, not sticky", 0o777, -1, "writable by others and not sticky"},
		{"group-writable, not sticky", 0o770, -1, "writable by others and not sticky"},
		{"another user's", 0o755, 65534, "belongs to uid 65534"},
	}
	for i, c := range cases {
		if c.uid >= 0 && os.Getuid() != 0 {
			continue // needs root to give a directory away
		}
		dir := filepath.Join(base, strconv.Itoa(i))
		os.Mkdir(dir, 0o700)
		if err := os.Chmod(dir, c.mode); err != nil {
			t.Fatal(err)
		}
		if c.uid >= 0 {
			os.Chown(dir, c.uid, c.uid)
		}
		ln, err := Listen(filepath.Join(dir, "s.sock"), Options{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
		if ln != nil {
			ln.Remove()
		}
	}
}
