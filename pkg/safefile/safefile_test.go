//go:build linux

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
)

// tree is a root holding one file of every kind, and an outside directory
// with a secret:
//
//	root/file.txt          regular, "inside"
//	root/dir/              directory
//	root/dir/nested.txt    regular, "nested"
//	root/fifo, sock, dev   FIFO, Unix socket, device (see safefiletest.Make)
//	root/link-in           -> file.txt
//	root/link-fifo         -> fifo
//	root/link-out          -> outside/secret.txt
//	root/up                -> outside (a directory leading out)
//	outside/secret.txt     regular, "SECRET"
type tree struct {
	root, outside string
	device        bool // root/dev exists
}

func newTree(tb testing.TB) tree {
	tb.Helper()
	base, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tr := tree{root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(tr.root, "dir"), 0o755))
	must(os.MkdirAll(tr.outside, 0o755))
	must(os.WriteFile(filepath.Join(tr.root, "file.txt"), []byte("inside"), 0o644))
	must(os.WriteFile(filepath.Join(tr.root, "dir", "nested.txt"), []byte("nested"), 0o644))
	must(os.WriteFile(filepath.Join(tr.outside, "secret.txt"), []byte("SECRET"), 0o644))
	tr.device = len(safefiletest.Make(tb, tr.root)) == 3
	must(os.Symlink("file.txt", filepath.Join(tr.root, "link-in")))
	must(os.Symlink("fifo", filepath.Join(tr.root, "link-fifo")))
	must(os.Symlink(filepath.Join(tr.outside, "secret.txt"), filepath.Join(tr.root, "link-out")))
	must(os.Symlink(tr.outside, filepath.Join(tr.root, "up")))
	return tr
}

func (tr tree) openRoot(tb testing.TB) *os.Root {
	tb.Helper()
	r, err := os.OpenRoot(tr.root)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// result is what one open gave: the content read, or the error's text.
func result(f *os.File, err error) (string, error) {
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := readAll(f)
	return string(b), err
}

func TestOpenKinds(t *testing.T) {
	tr := newTree(t)
	r := tr.openRoot(t)
	type want struct{ content, err string } // err: a substring of the error
	rows := []struct {
		name                string
		in, noFollow, plain want // OpenIn, OpenInNoFollow, Open(root/name)
		needDevice          bool
	}{
		{name: "file.txt", in: want{content: "inside"}, noFollow: want{content: "inside"}, plain: want{content: "inside"}},
		{name: "dir/nested.txt", in: want{content: "nested"}, noFollow: want{content: "nested"}, plain: want{content: "nested"}},
		{name: "dir", in: want{err: "dir is a directory, not a regular file"}, noFollow: want{err: "dir is a directory, not a regular file"}, plain: want{err: "is a directory, not a regular file"}},
		{name: "fifo", in: want{err: "fifo is a FIFO, not a regular file"}, noFollow: want{err: "fifo is a FIFO, not a regular file"}, plain: want{err: "fifo is a FIFO, not a regular file"}},
		{name: "sock", in: want{err: "sock is a socket, not a regular file"}, noFollow: want{err: "sock is a socket, not a regular file"}, plain: want{err: "sock is a socket, not a regular file"}},
		{name: "dev", needDevice: true, in: want{err: "dev is a device, not a regular file"}, noFollow: want{err: "dev is a device, not a regular file"}, plain: want{err: "dev is a device, not a regular file"}},
		{name: "link-in", in: want{content: "inside"}, noFollow: want{err: "link-in is a symbolic link, not a regular file"}, plain: want{err: "link-in is a symbolic link, not a regular file"}},
		{name: "link-fifo", in: want{err: "link-fifo is a FIFO, not a regular file"}, noFollow: want{err: "link-fifo is a symbolic link, not a regular file"}, plain: want{err: "link-fifo is a symbolic link, not a regular file"}},
		{name: "link-out", in: want{err: "escapes"}, noFollow: want{err: "link-out is a symbolic link, not a regular file"}, plain: want{err: "link-out is a symbolic link, not a regular file"}},
		// A parent directory leading out: os.Root refuses it; a plain path
		// follows it (Open keeps no root).
		{name: "up/secret.txt", in: want{err: "escapes"}, noFollow: want{err: "escapes"}, plain: want{content: "SECRET"}},
		{name: "../outside/secret.txt", in: want{err: "escapes"}, noFollow: want{err: "escapes"}, plain: want{content: "SECRET"}},
		{name: "missing", in: want{err: "no such file"}, noFollow: want{err: "no such file"}, plain: want{err: "no such file"}},
		// A special file where a directory belongs is never opened.
		{name: "fifo/x", in: want{err: "not a directory"}, noFollow: want{err: "not a directory"}, plain: want{err: "not a directory"}},
		{name: "link-fifo/x", in: want{err: "not a directory"}, noFollow: want{err: "not a directory"}, plain: want{err: "not a directory"}},
	}
	check := func(t *testing.T, how string, got string, err error, w want) {
		t.Helper()
		switch {
		case w.err == "" && err != nil:
			t.Errorf("%s: %v, want %q", how, err, w.content)
		case w.err == "" && got != w.content:
			t.Errorf("%s: read %q, want %q", how, got, w.content)
		case w.err != "" && (err == nil || !strings.Contains(err.Error(), w.err)):
			t.Errorf("%s: got %q, %v; want an error with %q", how, got, err, w.err)
		}
		if w.err != "" && strings.Contains(w.err, "not a regular file") && !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s: %v does not match ErrNotRegular", how, err)
		}
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			if row.needDevice && !tr.device {
				t.Skip("making a device node needs root")
			}
			safefiletest.Prompt(t, "OpenIn "+row.name, func() {
				got, err := result(OpenIn(r, row.name))
				check(t, "OpenIn", got, err, row.in)
			})
			safefiletest.Prompt(t, "OpenInNoFollow "+row.name, func() {
				got, err := result(OpenInNoFollow(r, row.name))
				check(t, "OpenInNoFollow", got, err, row.noFollow)
			})
			safefiletest.Prompt(t, "Open "+row.name, func() {
				got, err := result(Open(filepath.Join(tr.root, row.name)))
				check(t, "Open", got, err, row.plain)
			})
			safefiletest.Prompt(t, "Dirs.OpenNoFollow "+row.name, func() {
				d := NewDirs(r)
				defer d.Close()
				got, err := result(d.OpenNoFollow(row.name))
				check(t, "Dirs.OpenNoFollow", got, err, row.noFollow)
				fi, err := d.Lstat(row.name)
				if row.noFollow.err == "" && (err != nil || !fi.Mode().IsRegular()) {
					t.Errorf("Dirs.Lstat: %v %v", fi, err)
				}
			})
			safefiletest.Prompt(t, "ReadFileAt "+row.name, func() {
				b, err := ReadFileAt(tr.root, row.name)
				check(t, "ReadFileAt", string(b), err, row.in)
			})
		})
	}
}

// TestOpenedFileIsCheckedAgain: a name that was a regular file when checked
// and is a FIFO when opened (the race between Lstat and open) is refused by
// the check of the opened descriptor.
func TestOpenedFileIsCheckedAgain(t *testing.T) {
	tr := newTree(t)
	f, err := os.OpenFile(filepath.Join(tr.root, "fifo"), os.O_RDONLY|openFlags, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkOpened(f, "fifo"); err == nil || err.Error() != "fifo is a FIFO, not a regular file" {
		t.Fatalf("checkOpened of a FIFO: %v", err)
	}
	if err := f.Close(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("the refused descriptor was not closed: %v", err)
	}
}

// TestRegularFileIsBlocking: the descriptor handed out has O_NONBLOCK
// cleared.
func TestRegularFileIsBlocking(t *testing.T) {
	tr := newTree(t)
	f, err := OpenIn(tr.openRoot(t), "file.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rc, _ := f.SyscallConn()
	var flags int
	rc.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) })
	if err != nil || flags&unix.O_NONBLOCK != 0 {
		t.Fatalf("flags %#x, %v: O_NONBLOCK is still set", flags, err)
	}
}

// TestNoDescriptorsHeld: refusing special files thousands of times leaves no
// descriptor open (each blocked open used to hold one).
func TestNoDescriptorsHeld(t *testing.T) {
	tr := newTree(t)
	r := tr.openRoot(t)
	count := func() int {
		es, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(es)
	}
	before := count()
	safefiletest.Prompt(t, "5000 opens", func() {
		for i := 0; i < 1000; i++ {
			for _, n := range []string{"fifo", "sock", "link-fifo", "dir", "dev"} {
				if f, err := OpenIn(r, n); err == nil {
					f.Close()
					t.Errorf("%s opened", n)
					return
				}
			}
		}
	})
	if after := count(); after > before+2 {
		t.Fatalf("%d descriptors before, %d after", before, after)
	}
}

func TestDirectories(t *testing.T) {
	tr := newTree(t)
	r := tr.openRoot(t)
	for name, want := range map[string]string{
		"dir": "", ".": "", "fifo": "fifo is a FIFO, not a directory", "sock": "sock is a socket, not a directory",
		"dev": "dev is a device, not a directory", "file.txt": "file.txt is a regular file, not a directory",
		"link-fifo": "link-fifo is a FIFO, not a directory", "up": "escapes", "fifo/x": "not a directory", "missing": "no such file",
	} {
		if name == "dev" && !tr.device {
			continue
		}
		safefiletest.Prompt(t, "OpenRootIn "+name, func() {
			sub, err := OpenRootIn(r, name)
			if err == nil {
				sub.Close()
			}
			if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
				t.Errorf("OpenRootIn(%s): %v; want %q", name, err, want)
			}
		})
		safefiletest.Prompt(t, "ReadDirIn "+name, func() {
			es, err := ReadDirIn(r, name)
			if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
				t.Errorf("ReadDirIn(%s): %v; want %q", name, err, want)
			}
			if name == "dir" && (len(es) != 1 || es[0].Name() != "nested.txt") {
				t.Errorf("ReadDirIn(dir) = %v", es)
			}
		})
	}
}

func TestKind(t *testing.T) {
	for m, want := range map[fs.FileMode]string{
		0o644: "regular file", fs.ModeDir: "directory", fs.ModeNamedPipe: "FIFO", fs.ModeSocket: "socket",
		fs.ModeDevice: "device", fs.ModeDevice | fs.ModeCharDevice: "device", fs.ModeSymlink: "symbolic link",
		fs.ModeIrregular: "special file",
	} {
		if got := Kind(m); got != want {
			t.Errorf("Kind(%v) = %q, want %q", m, got, want)
		}
	}
}

// FuzzOpenIn: whatever the name, OpenIn, OpenInNoFollow and
// Dirs.OpenNoFollow return at once, and what they open is a regular file
// inside the root (never the outside secret).
func FuzzOpenIn(f *testing.F) {
	tr := newTree(f)
	r, err := os.OpenRoot(tr.root)
	if err != nil {
		f.Fatal(err)
	}
	defer r.Close()
	for _, s := range []string{"file.txt", "dir", "fifo", "sock", "dev", "link-in", "link-fifo", "link-out", "up/secret.txt",
		"dir/../fifo", "dir/../link-out", "./up/../file.txt", "../outside/secret.txt", "/etc/passwd", "fifo/", "", "a\x00b"} {
		f.Add(s)
	}
	dirs := NewDirs(r) // kept across inputs: its open directory too must never lead out
	defer dirs.Close()
	f.Fuzz(func(t *testing.T, name string) {
		for _, open := range []func(*os.Root, string) (*os.File, error){OpenIn, OpenInNoFollow, func(_ *os.Root, name string) (*os.File, error) { return dirs.OpenNoFollow(name) }} {
			fh, err := open(r, name)
			if err != nil {
				continue
			}
			b, err := readAll(fh)
			fh.Close()
			if err != nil {
				t.Fatalf("%q: read: %v", name, err)
			}
			if s := string(b); s != "inside" && s != "nested" {
				t.Fatalf("%q: opened something else: %q", name, s)
			}
		}
	})
}
