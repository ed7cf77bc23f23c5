//go:build unix

package test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestStopCommand: `hearthd stop` stops the daemon serving the data
// directory as SIGTERM does (a clean exit, its socket and readiness file
// removed) and waits for it; it asks with the control request
// $/hearth/stop, which the daemon logs as its reason, not with a signal;
// with none serving it says there is nothing to stop and succeeds.
func TestStopCommand(t *testing.T) {
	d := startDaemon(t)
	stop := func() (string, int) {
		cmd := exec.Command(bin.hearthd, "stop")
		cmd.Env = d.cmd.Env
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	out, code := stop()
	if code != 0 || !strings.Contains(out, "stopped hearthd socket (pid ") {
		t.Fatalf("hearthd stop: %d %s", code, out)
	}
	select {
	case err := <-d.done:
		d.done <- err
		if err != nil {
			t.Fatalf("the daemon exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("hearthd stop returned but the daemon runs on")
	}
	for _, p := range []string{d.socket, d.ready} {
		if _, err := os.Lstat(p); err == nil {
			t.Fatalf("%s left behind", p)
		}
	}
	if !strings.Contains(d.stderr.String(), "mcp:shutdown mode=socket") {
		t.Fatalf("no clean shutdown:\n%s", d.stderr.String())
	}
	if log := d.stderr.String(); !strings.Contains(log, `"by":"$/hearth/stop"`) || !strings.Contains(log, `"reason":"hearthd stop"`) {
		t.Fatalf("the daemon was not stopped by $/hearth/stop:\n%s", log)
	}
	if out, code := stop(); code != 0 || !strings.Contains(out, "nothing to stop") {
		t.Fatalf("hearthd stop with none serving: %d %s", code, out)
	}
}
