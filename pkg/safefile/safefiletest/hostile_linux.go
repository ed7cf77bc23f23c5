//go:build linux

package safefiletest

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func init() { hostile = makeHostile }

func makeHostile(tb testing.TB, dir string, name func(class string) string, content func(string) []byte, limit int64) map[string]string {
	tb.Helper()
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	must(os.MkdirAll(dir, 0o700))
	outside := tb.TempDir()
	made := map[string]string{}
	at := func(class string) string {
		n := name(class)
		made[n] = class
		return filepath.Join(dir, n)
	}
	must(unix.Mkfifo(at(ClassFIFO), 0o600))
	listen(tb, at(ClassSocket))
	must(os.Symlink("/dev/zero", at(ClassLinkDev)))
	must(unix.Mkfifo(filepath.Join(outside, "fifo"), 0o600))
	must(os.Symlink(filepath.Join(outside, "fifo"), at(ClassLinkFIFO)))
	out := at(ClassLinkOut)
	must(os.WriteFile(filepath.Join(outside, "file"), content(filepath.Base(out)), 0o600))
	must(os.Symlink(filepath.Join(outside, "file"), out))
	w := at(ClassWritable)
	must(os.WriteFile(w, content(filepath.Base(w)), 0o600))
	must(os.Chmod(w, 0o666))
	big := at(ClassTooLarge)
	must(os.WriteFile(big, content(filepath.Base(big)), 0o600))
	must(os.Truncate(big, limit+1))
	must(os.Mkdir(at(ClassDirectory), 0o700))
	if os.Geteuid() != 0 {
		tb.Logf("not root: no device node and no file of another user's in %s", dir)
		return made
	}
	if err := unix.Mknod(at(ClassDevice), unix.S_IFCHR|0o600, int(unix.Mkdev(1, 5))); err != nil { // what /dev/zero is
		tb.Logf("no device node in %s: %v", dir, err)
		delete(made, name(ClassDevice))
	}
	f := at(ClassForeign)
	must(os.WriteFile(f, content(filepath.Base(f)), 0o600))
	must(os.Chown(f, ForeignUID, ForeignUID))
	return made
}
