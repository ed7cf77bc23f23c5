//go:build unix

package upgrade

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// install puts content at path as an upgrade does: a new file renamed over
// the old one (a new inode).
func install(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// The file a daemon started from is not news; another file of another
// version is, once; one of the same version, one others may write, one
// that is no hearthd, a directory, or one whose version fails is refused,
// and each file is judged once, however often the daemon checks.
func TestWatchNamesANewerHearthdOnce(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "hearthd")
	install(t, exe, "v1", 0o755)
	var probes atomic.Int32
	probe := func(path string) (string, error) {
		probes.Add(1)
		b, err := os.ReadFile(path)
		switch s := string(b); {
		case err != nil:
			return "", err
		case s == "fails":
			return "", errors.New("exit status 2")
		case s == "other":
			return "node v22\n", nil
		default:
			return "hearthd " + s + "\n", nil
		}
	}
	w, err := NewWatch(exe, exe, "v1", probe)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := w.Check(); got != "" || err != nil || probes.Load() != 0 {
		t.Fatalf("the daemon's own file: %q %v (%d probes)", got, err, probes.Load())
	}
	cases := []struct {
		content string
		mode    os.FileMode
		refusal string // "" : handed over to
	}{
		{"v1", 0o755, "this daemon's version"},
		{"v2", 0o775, "others may write it"},
		{"v2", 0o644, "not executable"},
		{"other", 0o755, "not a hearthd's version"},
		{"fails", 0o755, "exit status 2"},
		{"v2", 0o755, ""},
		{"v3", 0o700, ""},
	}
	for _, c := range cases {
		install(t, exe, c.content, c.mode)
		before := probes.Load()
		got, err := w.Check()
		switch {
		case c.refusal == "" && (got != exe || err != nil):
			t.Fatalf("%s %v: %q %v, want the path", c.content, c.mode, got, err)
		case c.refusal != "" && (got != "" || err == nil || !strings.Contains(err.Error(), c.refusal)):
			t.Fatalf("%s %v: %q %v, want a refusal saying %q", c.content, c.mode, got, err, c.refusal)
		}
		// Judged once: the next checks say nothing and run nothing.
		for range 3 {
			if got, err := w.Check(); got != "" || err != nil {
				t.Fatalf("%s %v checked again: %q %v", c.content, c.mode, got, err)
			}
		}
		if n := probes.Load() - before; n > 1 {
			t.Fatalf("%s %v: probed %d times", c.content, c.mode, n)
		}
	}
	// Not a regular file.
	os.Remove(exe)
	if err := os.Mkdir(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := w.Check(); got != "" || err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a directory: %q %v", got, err)
	}
	// Gone: said, and looked at again (nothing to remember).
	os.Remove(exe)
	if _, err := w.Check(); err == nil {
		t.Fatal("a removed executable was not reported")
	}
}

// A file that passes on its own is still not run from a directory another
// user may write, straight or through a link: that user could swap in a
// file of theirs between the check and the run (of its `version`, or as
// the successor). A sticky directory (/tmp's mode) is no such place.
func TestWatchRefusesAPlaceOthersMayChange(t *testing.T) {
	probe := func(path string) (string, error) {
		b, err := os.ReadFile(path)
		return "hearthd " + string(b), err
	}
	for _, c := range []struct {
		name    string
		dirMode os.FileMode // the mode of the directory the file is in
		link    bool        // the watched path is a link, in a private directory, to the file
		refusal string
	}{
		{"group may write", 0o775, false, "others may write"},
		{"anyone may write", 0o777, false, "others may write"},
		{"linked into a directory anyone may write", 0o777, true, "others may write"},
		{"sticky", 0o777 | os.ModeSticky, false, ""},
		{"private", 0o755, false, ""},
		{"linked into a private directory", 0o755, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "bin")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "hearthd")
			install(t, file, "v1", 0o755)
			exe := file
			if c.link {
				exe = filepath.Join(root, "hearthd")
				if err := os.Symlink(file, exe); err != nil {
					t.Fatal(err)
				}
			}
			w, err := NewWatch(exe, exe, "v1", probe)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, c.dirMode); err != nil {
				t.Fatal(err)
			}
			install(t, file, "v2", 0o755)
			got, err := w.Check()
			switch {
			case c.refusal == "" && (got != exe || err != nil):
				t.Fatalf("%q %v, want the path", got, err)
			case c.refusal != "" && (got != "" || err == nil || !strings.Contains(err.Error(), c.refusal)):
				t.Fatalf("%q %v, want a refusal saying %q", got, err, c.refusal)
			}
		})
	}
}

// A newer file installed while the daemon started, after it was executed
// and before it began to watch, is news: the watch is seeded with the file
// the daemon runs, not with what the path holds by then.
func TestWatchSeesAnInstallDuringTheStart(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "hearthd")
	install(t, exe, "v1", 0o755)
	running := filepath.Join(dir, "running")
	if err := os.Link(exe, running); err != nil { // what /proc/self/exe goes on naming
		t.Fatal(err)
	}
	install(t, exe, "v2", 0o755)
	probe := func(path string) (string, error) {
		b, err := os.ReadFile(path)
		return "hearthd " + string(b) + "\n", err
	}
	w, err := NewWatch(exe, running, "v1", probe)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := w.Check(); got != exe || err != nil {
		t.Fatalf("a file installed during the start: %q %v, want %s handed over to", got, err, exe)
	}
}
