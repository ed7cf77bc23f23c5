//go:build linux

package hosted

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
)

// An upstream's stderr log is a file of hearth's own: a link planted at its
// name is never written through, neither when the log is opened nor when
// it is rotated (no O_TRUNC through a name); a FIFO or another user's file
// there is not written either, and the kept last lines still are.
func TestStderrLogWritesNoPlantedFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "precious")
	os.WriteFile(target, []byte("keep me"), 0o600)
	for _, class := range []string{"link", "fifo", "foreign"} {
		p := filepath.Join(dir, class+".log")
		switch class {
		case "link":
			os.Symlink(target, p)
		case "fifo":
			if err := unix.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		case "foreign":
			if os.Geteuid() != 0 {
				continue
			}
			os.WriteFile(p, []byte("theirs"), 0o600)
			os.Chown(p, safefiletest.ForeignUID, safefiletest.ForeignUID)
		}
		safefiletest.Prompt(t, "a log over a "+class, func() {
			l := openStderrLog(p, 16)
			l.Write([]byte("a line\n"))
			if tail := l.tail(); len(tail) != 1 || tail[0] != "a line" {
				t.Errorf("%s: tail %q", class, tail)
			}
			l.close()
		})
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Fatalf("the planted link's target was written: %q", b)
	}

	// Rotation: the log moved to .1, and a link planted at the name in
	// between is replaced, not truncated through.
	p := filepath.Join(dir, "rotating.log")
	l := openStderrLog(p, 16)
	defer l.close()
	l.Write([]byte("0123456789\n"))
	os.Rename(p, p+".moved")
	os.Symlink(target, p)
	l.Write([]byte("0123456789\n")) // over the cap: rotated
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Fatalf("rotation wrote through a planted link: %q", b)
	}
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("after rotation %s is %v %v", p, fi.Mode(), err)
	}
}
