//go:build linux

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
)

// The bad-input table of hearth's own files: every hostile class is
// refused by OpenOwn, ReadOwn and AppendOwn, at once (a FIFO, a device
// behind a link and a file larger than the limit included), with an error
// that names the file and what is wrong; nothing is read from it, and
// AppendOwn writes nothing through it.
func TestOwnFilesRefuseEveryHostileClass(t *testing.T) {
	dir := t.TempDir()
	content := []byte(`{"ok":true}`)
	const limit = 1 << 20
	made := safefiletest.Hostile(t, dir, func(class string) string { return strings.ReplaceAll(class, " ", "-") }, func(string) []byte { return content }, limit)
	want := map[string]string{
		safefiletest.ClassFIFO:      "is a FIFO",
		safefiletest.ClassSocket:    "is a socket",
		safefiletest.ClassDevice:    "is a device",
		safefiletest.ClassLinkDev:   "is a symbolic link",
		safefiletest.ClassLinkFIFO:  "is a symbolic link",
		safefiletest.ClassLinkOut:   "is a symbolic link",
		safefiletest.ClassForeign:   "belongs to uid 65534",
		safefiletest.ClassWritable:  "has mode 0666",
		safefiletest.ClassTooLarge:  "more than the 1048576",
		safefiletest.ClassDirectory: "is a directory",
	}
	for name, class := range made {
		p := filepath.Join(dir, name)
		safefiletest.Prompt(t, "ReadOwn of "+class, func() {
			b, err := ReadOwn(p, limit)
			if err == nil || !strings.Contains(err.Error(), want[class]) || !strings.Contains(err.Error(), p) {
				t.Errorf("ReadOwn of a %s: %q, %v (want %q)", class, b, err, want[class])
			}
		})
		if class == safefiletest.ClassTooLarge {
			continue // appending to a large file of one's own is fine
		}
		safefiletest.Prompt(t, "AppendOwn of "+class, func() {
			f, err := AppendOwn(p)
			if err == nil {
				f.Close()
				t.Errorf("AppendOwn of a %s opened it", class)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(dir, strings.ReplaceAll(safefiletest.ClassLinkOut, " ", "-"))); err != nil || string(b) != string(content) {
		t.Fatalf("the planted link's target changed: %q %v", b, err)
	}
	good := filepath.Join(dir, "good")
	os.WriteFile(good, content, 0o600)
	if b, err := ReadOwn(good, limit); err != nil || string(b) != string(content) {
		t.Fatalf("a good file: %q %v", b, err)
	}
	if _, err := ReadOwn(good, 4); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over a small limit: %v", err)
	}
	var nr *NotRegularError
	if _, err := OpenOwn(filepath.Join(dir, "FIFO")); !errors.As(err, &nr) || !errors.Is(err, ErrNotRegular) {
		t.Fatalf("a FIFO's error: %v", err)
	}
}

// CreateOwn replaces a name and never writes through it: a link planted
// at a log's name is removed, and its target keeps what it held.
func TestCreateOwnReplacesALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "precious")
	os.WriteFile(target, []byte("keep me"), 0o600)
	p := filepath.Join(dir, "log")
	os.Symlink(target, p)
	f, err := CreateOwn(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	f.Close()
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Fatalf("the link's target was written: %q", b)
	}
	if fi, _ := os.Lstat(p); !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s is %v", p, fi.Mode())
	}
}

// OwnDir makes a missing directory 0700, narrows one of the user's own,
// and refuses a link, a file, and another user's directory.
func TestOwnDir(t *testing.T) {
	base := t.TempDir()
	fresh := filepath.Join(base, "fresh")
	if err := OwnDir(fresh); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o700)
	os.Chmod(open, 0o777)
	if err := OwnDir(open); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{fresh, open} {
		if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s is %v", d, fi.Mode())
		}
	}
	elsewhere := t.TempDir()
	link := filepath.Join(base, "link")
	os.Symlink(elsewhere, link)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	bad := map[string]string{link: "symbolic link", file: "regular file"}
	if os.Geteuid() == 0 {
		foreign := filepath.Join(base, "foreign")
		os.Mkdir(foreign, 0o777)
		os.Chown(foreign, safefiletest.ForeignUID, safefiletest.ForeignUID)
		bad[foreign] = "belongs to uid 65534"
	}
	for d, why := range bad {
		if err := OwnDir(d); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("OwnDir(%s): %v, want %q", d, err, why)
		}
	}
}

// FuzzReadOwn: whatever the name, in a directory holding every hostile
// class and one good file, ReadOwn returns at once, and what it returns is
// the good file's content, never a planted link's target, a device's or
// another user's file.
func FuzzReadOwn(f *testing.F) {
	dir := f.TempDir()
	made := safefiletest.Hostile(f, dir, func(class string) string { return strings.ReplaceAll(class, " ", "-") }, func(string) []byte { return []byte("planted") }, 64)
	os.WriteFile(filepath.Join(dir, "good"), []byte("good"), 0o600)
	for name := range made {
		f.Add(name)
		f.Add(name + "/")
		f.Add("directory/../" + name)
	}
	for _, s := range []string{"good", "./good", "directory/../good", "", "..", "/dev/zero", "good\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if filepath.IsAbs(name) || strings.Contains(name, "..") {
			return // only names inside the directory are hearth's own
		}
		done := make(chan struct{})
		var b []byte
		var err error
		go func() { defer close(done); b, err = ReadOwn(filepath.Join(dir, name), 64) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadOwn(%q) blocked", name)
		}
		if err == nil && string(b) != "good" {
			t.Fatalf("ReadOwn(%q) read %q", name, b)
		}
	})
}
