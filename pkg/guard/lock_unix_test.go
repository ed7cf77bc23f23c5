//go:build unix

package guard

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
)

// On Unix the guard locks the home directory itself and creates no lock file.
const lockLeavesFile = false

// The lock is an exclusive flock on the home directory: another open file
// description cannot take it while the guard holds it, and can after.
func TestLockIsExclusive(t *testing.T) {
	home := t.TempDir()
	unlock, err := lock(home)
	if err != nil {
		t.Fatal(err)
	}
	probe, err := os.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	if err := unix.Flock(int(probe.Fd()), unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Fatalf("while the guard holds the lock, a second flock got %v, want EWOULDBLOCK", err)
	}
	unlock()
	if err := unix.Flock(int(probe.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	unix.Flock(int(probe.Fd()), unix.LOCK_UN)
	if _, err := os.Lstat(filepath.Join(home, lockName)); err == nil {
		t.Fatal("a lock file was created although the directory could be locked")
	}
}

// A FIFO named like the marker is refused without being opened (opening it
// would block the daemon's start for ever).
func TestMarkerFIFOIsRefused(t *testing.T) {
	home := t.TempDir()
	if err := unix.Mkfifo(filepath.Join(home, MarkerName), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Check(home, build)
	if ge := refusal(t, err); ge.ExitCode != ExitDataErr || ge.Reason != ReasonBadMarker {
		t.Fatalf("%+v", ge)
	}
}

// The fallback for file systems that cannot flock a directory (NFS) is an
// exclusive flock on a hidden file in home, which is not data.
func TestFallbackLockFileIsExclusive(t *testing.T) {
	home := t.TempDir()
	unlock, err := lockFile(home)
	if err != nil {
		t.Fatal(err)
	}
	probe, err := os.OpenFile(filepath.Join(home, lockName), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	if err := unix.Flock(int(probe.Fd()), unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Fatalf("while held, a second flock got %v, want EWOULDBLOCK", err)
	}
	unlock()
	if err := unix.Flock(int(probe.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	if names, err := dataEntries(home); err != nil || len(names) != 0 {
		t.Fatalf("the lock file counts as data: %v %v", names, err)
	}
}

// The bad-input table of hearth's own files, for the marker: whatever the
// class (a FIFO, a socket, a device, a link to a device, a FIFO or another
// file, another user's file, one others may write, one too large, a
// directory), the marker is refused at once as a bad marker, and nothing
// in the home is changed.
func TestMarkerOfEveryHostileClassIsRefused(t *testing.T) {
	good := []byte(Format + "\n" + build + "\n")
	for _, class := range safefiletest.Classes {
		t.Run(class, func(t *testing.T) {
			home := t.TempDir()
			if !safefiletest.HostileAt(t, home, MarkerName, class, good, maxMarker) {
				t.Skipf("no %s made here", class)
			}
			before := treeHash(t, home)
			safefiletest.Prompt(t, "Check", func() {
				_, err := Check(home, build)
				var ge *Error
				if !errors.As(err, &ge) || ge.ExitCode != ExitDataErr || ge.Reason != ReasonBadMarker {
					t.Errorf("a marker of class %q: %v", class, err)
				}
			})
			if treeHash(t, home) != before {
				t.Fatal("the home was changed")
			}
		})
	}
}
