//go:build linux

package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeMakesTheStateDirectoryPrivate: `hearthd serve` started by hand
// (not by a shim's autostart) finds a state directory left open to every
// user, with the catalog, servers and http-sessions directories inside it
// open too: it serves with each narrowed to 0700, so no other user can
// swap an entry in.
func TestServeMakesTheStateDirectoryPrivate(t *testing.T) {
	home := shortTempDir(t)
	state := filepath.Join(home, ".local", "state", "hearth")
	for _, d := range []string{state, filepath.Join(state, "catalog"), filepath.Join(state, "servers")} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o777)
	}
	startDaemon(t, "HOME="+home)
	for _, d := range []string{state, filepath.Join(state, "catalog"), filepath.Join(state, "servers"), filepath.Join(state, "http-sessions")} {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s after the daemon started: %v %v", d, fi.Mode(), err)
		}
	}
}

// TestServeRefusesAStateDirectoryNotItsOwn: a state directory another user
// owns, or a subdirectory of it that is another user's or a symbolic link
// (servers/ pointed elsewhere, so the daemon would write hosted servers'
// logs there), stops the daemon's start with an error that names it,
// before it serves anything.
func TestServeRefusesAStateDirectoryNotItsOwn(t *testing.T) {
	type plant func(t *testing.T, state string)
	cases := map[string]plant{
		"servers is a link": func(t *testing.T, state string) {
			os.MkdirAll(state, 0o700)
			os.Symlink(t.TempDir(), filepath.Join(state, "servers"))
		},
		"catalog is a link": func(t *testing.T, state string) {
			os.MkdirAll(state, 0o700)
			os.Symlink(t.TempDir(), filepath.Join(state, "catalog"))
		},
	}
	if os.Geteuid() == 0 {
		cases["the state directory is another user's"] = func(t *testing.T, state string) {
			os.MkdirAll(state, 0o777)
			os.Chown(state, 65534, 65534)
		}
		cases["catalog is another user's"] = func(t *testing.T, state string) {
			os.MkdirAll(filepath.Join(state, "catalog"), 0o777)
			os.Chmod(state, 0o700)
			os.Chown(filepath.Join(state, "catalog"), 65534, 65534)
		}
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			home := shortTempDir(t)
			state := filepath.Join(home, ".local", "state", "hearth")
			plant(t, state)
			runtime := shortTempDir(t)
			cmd := exec.Command(bin.hearthd, "serve")
			cmd.Env = append(os.Environ(), "HOME="+home, "XDG_RUNTIME_DIR="+runtime, "HEARTH_HOME="+filepath.Join(runtime, "home"), "MCP_SOCKET_PATH=", "MCP_READY_FILE=")
			done := make(chan []byte, 1)
			go func() { out, _ := cmd.CombinedOutput(); done <- out }()
			select {
			case out := <-done:
				if cmd.ProcessState.ExitCode() == 0 || !strings.Contains(string(out), state) {
					t.Fatalf("exit %d:\n%s", cmd.ProcessState.ExitCode(), out)
				}
			case <-time.After(15 * time.Second):
				cmd.Process.Signal(syscall.SIGKILL)
				t.Fatalf("the daemon served with %s", name)
			}
		})
	}
}
