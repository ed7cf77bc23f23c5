//go:build linux

package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// buildHearthd builds hearthd stamped with version (as tools/release
// stamps pkg/version) into dir.
func buildHearthd(t *testing.T, dir, version string) string {
	t.Helper()
	out := filepath.Join(dir, "hearthd-"+version)
	cmd := exec.Command("go", "build", "-tags", "hearth_resultcheck", "-ldflags", "-X github.com/hearth-mcp/hearth/pkg/version.Version="+version, "-o", out, "github.com/hearth-mcp/hearth/daemon/hearthd")
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building hearthd %s: %v\n%s", version, err, o)
	}
	return out
}

// installAt puts a copy of from at path as a package manager does: a new
// file renamed over the old one.
func installAt(t *testing.T, from, path string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".new", b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path+".new", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

// statusOf is `hearthd status --json`'s pid and version.
func statusOf(t *testing.T, env []string) (pid int, version string) {
	t.Helper()
	out, code := runHearthdCmd(t, env, "status", "--json")
	if code != 0 {
		return 0, ""
	}
	var st struct {
		PID     int    `json:"pid"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("hearthd status --json: %v\n%s", err, out)
	}
	return st.PID, st.Version
}

// A newer hearthd renamed over the file the daemon runs from, while three
// clients call a hosted server that counts its calls in memory: the next
// client to connect makes the daemon hand over to it by itself. The new
// daemon (its version in hearthd status) serves the same upstream process,
// initialized once; every call in flight returned once; the old daemon is
// gone; a kill -9 of the new one still ends the upstream and its keeper.
func TestHostedUpstreamOutlivesUpgrade(t *testing.T) {
	dir := t.TempDir()
	v1, v2 := buildHearthd(t, dir, "9.0.1"), buildHearthd(t, dir, "9.0.2")
	installDir := filepath.Join(dir, "bin")
	if err := os.Mkdir(installDir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(installDir, "hearthd")
	installAt(t, v1, exe)
	env, runtime, _ := shimEnv(t, "HEARTH_DAEMON="+exe)
	daemons := func() []int { return daemonsOf(exe, "XDG_RUNTIME_DIR="+runtime) }
	t.Cleanup(func() {
		for _, p := range daemons() {
			syscall.Kill(p, syscall.SIGKILL)
		}
	})
	server := filepath.Join(bin.dir, "hostedserver")

	clients := make([]*mcp.ClientSession, 3)
	for i := range clients {
		clients[i] = hostedClient(t, env, nil, "2025-11-25")
	}
	pid := oneUpstreamCounting(t, clients, "before the upgrade")
	keeper := parentOf(pid)
	oldPID, oldVersion := statusOf(t, env)
	if before := daemons(); len(before) != 1 || before[0] != oldPID || !strings.HasPrefix(oldVersion, "9.0.1") || keeper <= 1 {
		t.Fatalf("daemons %v, status pid %d version %q, keeper %d", before, oldPID, oldVersion, keeper)
	}

	load := startCountLoad(t, clients, pid)
	installAt(t, v2, exe)
	// A client connecting is what has the daemon look at its executable.
	late := hostedClient(t, env, nil, "2025-11-25")
	var newPID int
	var newVersion string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if newPID, newVersion = statusOf(t, env); newPID != oldPID && strings.HasPrefix(newVersion, "9.0.2") {
			break
		}
		if time.Now().After(deadline) {
			load.stop()
			t.Fatalf("60s after the upgrade was installed: status pid %d version %q (was %d)", newPID, newVersion, oldPID)
		}
	}
	load.answeredAfter(30)
	load.stop()

	if !gone(oldPID) {
		t.Fatalf("the old daemon %d still runs after the hand-over", oldPID)
	}
	if now := daemons(); len(now) != 1 || now[0] != newPID {
		t.Fatalf("daemons after the upgrade %v, status pid %d", now, newPID)
	}
	last, _ := callText(t, clients[0], "count", nil)
	calls, inits, p := countReply(t, last)
	if p != pid || inits != 1 {
		t.Fatalf("after the upgrade: %q, want pid %d and still one initialize", last, pid)
	}
	if out, _ := callText(t, late, "echo", map[string]any{"text": "late"}); out != "late pid="+strconv.Itoa(pid) {
		t.Fatalf("the client that connected as the upgrade came: %q, want pid %d", out, pid)
	}
	if now := processesOf(server); len(now) != 1 || now[0] != pid {
		t.Fatalf("upstreams after the upgrade: %v", now)
	}
	// 3 counts before the load, and the last.
	load.check(calls-3-1, 30)

	// No orphan: a crash of the new daemon still ends the upstream and its
	// keeper.
	killLeavesNoOrphan(t, newPID, server, keeper)
}
