//go:build unix

package test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server addressed relatively (`env ./hostedserver`, as `python3
// server.py` is) from a subdirectory of a repository runs behind hearth
// where a direct spawn runs it: in the client's directory. Two windows in
// two subdirectories get two instances, each in its own directory. Global
// sharing, which runs the server in the home directory, refuses the relative
// argument and says why (docs/decisions/0032-hosted-instance-key.md).
func TestHostedServerRunsInTheClientsDirectory(t *testing.T) {
	env, _, _ := shimEnv(t)
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(filepath.Join(bin.dir, "hostedserver"))
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{}
	for _, name := range []string{"server", "other"} {
		dir := filepath.Join(repo, "tools", name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "hostedserver"), exe, 0o700); err != nil {
			t.Fatal(err)
		}
		dirs[name], _ = filepath.EvalSymlinks(dir)
	}
	connect := func(dir string, args ...string) *mcp.ClientSession {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env, cmd.Dir = env, dir
		return connectCommand(t, cmd, nil, "2025-11-25")
	}
	where := func(cs *mcp.ClientSession) (dir, pid string) {
		t.Helper()
		out, isErr := callText(t, cs, "cwd", map[string]any{})
		dir, pid, ok := strings.Cut(out, " pid=")
		if isErr || !ok {
			t.Fatalf("cwd: %q (error %v)", out, isErr)
		}
		return dir, pid
	}

	direct, _ := where(connect(dirs["server"], "env", "./hostedserver"))
	if direct != dirs["server"] {
		t.Fatalf("spawned directly, the server runs in %s, not %s", direct, dirs["server"])
	}
	hosted, serverPid := where(connect(dirs["server"], bin.hearth, "run", "--", "env", "./hostedserver"))
	if hosted != direct {
		t.Fatalf("behind hearth the server runs in %s; spawned directly, in %s", hosted, direct)
	}
	other, otherPid := where(connect(dirs["other"], bin.hearth, "run", "--", "env", "./hostedserver"))
	if other != dirs["other"] || otherPid == serverPid {
		t.Fatalf("the window in %s got the server in %s (pid %s; the other window's is %s)", dirs["other"], other, otherPid, serverPid)
	}
	// A second window in the first directory shares its instance.
	if _, pid := where(connect(dirs["server"], bin.hearth, "run", "--", "env", "./hostedserver")); pid != serverPid {
		t.Fatalf("a second window in %s got pid %s, not the instance %s", dirs["server"], pid, serverPid)
	}

	for _, arg := range []string{"./hostedserver", "hostedserver"} {
		cmd := exec.Command(bin.hearth, "run", "--share", "global", "--", "env", arg)
		cmd.Env, cmd.Dir = env, dirs["server"]
		cl := mcp.NewClient(&mcp.Implementation{Name: "global", Version: "1"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		cancel()
		if err == nil {
			cs.Close()
			t.Fatalf("global sharing ran env %s from %s", arg, dirs["server"])
		}
		for _, want := range []string{"global sharing runs env " + arg + " in ", `its argument "` + arg + `" is relative to your directory ` + dirs["server"],
			"use an absolute path, or share by directory"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("global sharing of env %s: %v; want %q in it", arg, err, want)
			}
		}
	}
}
