//go:build linux

package safefiletest

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func init() { create = makeSpecial }

func makeSpecial(tb testing.TB, dir string) []Special {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	out := []Special{{"fifo", "FIFO"}, {"sock", "socket"}}
	if err := unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		tb.Fatal(err)
	}
	listen(tb, filepath.Join(dir, "sock"))
	if os.Geteuid() != 0 {
		tb.Logf("not root: no device node in %s", dir)
		return out
	}
	if err := unix.Mknod(filepath.Join(dir, "dev"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		tb.Logf("no device node in %s: %v", dir, err)
		return out
	}
	return append(out, Special{"dev", "device"})
}

// listen binds a Unix socket at path, through a short directory when path
// is longer than a socket address may be, and closes it when tb ends.
func listen(tb testing.TB, path string) {
	tb.Helper()
	at := path
	if len(path) > 100 {
		short, err := os.MkdirTemp("", "sock")
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { os.RemoveAll(short) })
		at = filepath.Join(short, "s")
	}
	l, err := net.Listen("unix", at)
	if err != nil {
		tb.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	tb.Cleanup(func() { l.Close() })
	if at != path {
		if err := os.Rename(at, path); err != nil {
			tb.Fatal(err)
		}
	}
}
