//go:build unix

package daemon

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
)

// A dead stdio owner's own socket, its lock and a readiness file naming
// its pid are removed; a socket something answers on, and a readiness
// file of another pid, are not.
func TestRemoveLeftovers(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "hearthd-stdio-4242.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	os.WriteFile(sock+".lock", []byte("4242\n"), 0o600)
	ready := filepath.Join(dir, "mcp.ready")
	os.WriteFile(ready, []byte("4243 2026-01-01T00:00:00Z\n"), 0o600)

	if got := RemoveLeftovers(4242, sock, ready); len(got) != 0 {
		t.Fatalf("removed %v while the socket answers and the readiness file is another pid's", got)
	}
	ln.Close() // as SIGKILL leaves it: the file stays, nothing listens
	os.WriteFile(ready, []byte("4242 2026-01-01T00:00:00Z\n"), 0o600)
	got := RemoveLeftovers(4242, sock, ready)
	for _, p := range []string{sock, sock + ".lock", ready} {
		if !slices.Contains(got, p) {
			t.Errorf("%s not removed (removed %v)", p, got)
		}
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s still there", p)
		}
	}
}

// A readiness file of any hostile class (a FIFO, a link, another user's,
// ...) names no pid: it is never waited on and never removed, though it
// names the dead owner's pid.
func TestHostileReadinessFilesNameNoPid(t *testing.T) {
	dir := t.TempDir()
	made := safefiletest.Hostile(t, dir, func(c string) string { return strings.ReplaceAll(c, " ", "-") },
		func(string) []byte { return []byte("4242 2026-01-01T00:00:00Z\n") }, 4096)
	for name, class := range made {
		safefiletest.Prompt(t, "readyPID of a "+class, func() {
			if pid := readyPID(filepath.Join(dir, name)); pid != 0 {
				t.Errorf("a readiness file of class %q named pid %d", class, pid)
			}
		})
	}
}
