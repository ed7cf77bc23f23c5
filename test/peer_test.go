//go:build unix

package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOtherUserRefused: even with the socket opened to everyone
// (MCP_SOCKET_MODE=0666), a client of another uid is hung up on by the
// daemon's SO_PEERCRED check, and the refusal is logged.
func TestOtherUserRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as nobody")
	}
	rawping := filepath.Join(bin.dir, "rawping")
	dir := shortTempDir(t)
	os.Chmod(dir, 0o755)
	sock := filepath.Join(dir, "open.sock")
	d := startDaemonAt(t, sock, "MCP_SOCKET_MODE=0666")

	asNobody := exec.Command(rawping, sock)
	asNobody.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := asNobody.CombinedOutput()
	if err != nil {
		t.Fatalf("rawping as nobody: %v\n%s", err, out)
	}
	if strings.TrimSpace(string(out)) != "closed" {
		t.Fatalf("another uid was served: %s", out)
	}
	// Our own uid is still served.
	mine, err := exec.Command(rawping, sock).CombinedOutput()
	if err != nil || !strings.Contains(string(mine), `"result":{}`) {
		t.Fatalf("own uid: %v %s", err, mine)
	}
	if log := d.stderr.String(); !strings.Contains(log, "refused a connection from another user") || !strings.Contains(log, `"peer_user":"65534"`) {
		t.Fatalf("refusal not logged:\n%s", log)
	}
}
