//go:build unix

package test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The hearthd commands that talk to the daemon check the process that
// serves the socket, as the shim does, and not only the socket file's
// owner: a server of another user's behind a socket file of ours (it bound
// it; the file was given to us afterwards) is refused before a byte is sent.
func TestHearthdRefusesAServerOfAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a server as another user")
	}
	dir := shortTempDir(t)
	os.Chmod(dir, 0o755)
	sockDir := filepath.Join(dir, "s")
	os.Mkdir(sockDir, 0o755)
	os.Chown(sockDir, 65534, 65534)
	sock := filepath.Join(sockDir, "hearthd.sock")
	srv := exec.Command(filepath.Join(bin.dir, "rawping"), "-listen", sock)
	srv.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("the other user's server: %q", lines.Text())
	}
	if err := os.Chown(sock, 0, 0); err != nil {
		t.Fatal(err)
	}
	os.Chown(sockDir, 0, 0)
	env := []string{"HEARTH_HOME=" + filepath.Join(dir, "home"), "HOME=" + dir, "MCP_SOCKET_PATH=" + sock}
	for _, cmd := range []string{"status", "stop"} {
		code, said := runHearthd(t, env, cmd)
		if code == 0 || !strings.Contains(said, "runs as uid 65534, not as you (uid 0)") {
			t.Errorf("hearthd %s: exit %d:\n%s", cmd, code, said)
		}
		// The server saw the connection, and not a byte of it.
		got := make(chan string, 1)
		go func() { lines.Scan(); got <- lines.Text() }()
		select {
		case line := <-got:
			if line != "read 0 bytes" {
				t.Errorf("hearthd %s sent the other user's server something: %s", cmd, line)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("hearthd %s did not connect at all", cmd)
		}
	}
}
