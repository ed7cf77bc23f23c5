//go:build linux

package test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRestartWhoseSuccessorDies: `hearthd restart` whose new daemon dies
// before it serves (killed here as soon as it appears, while the old one
// drains a call in flight) says so as soon as it is gone, naming the
// daemon a client's shim autostarted in its place, instead of waiting its
// full 60 s for a pid that will never answer.
func TestRestartWhoseSuccessorDies(t *testing.T) {
	env, runtime, state := shimEnv(t)
	os.MkdirAll(filepath.Join(state, ".config", "hearth"), 0o700)
	os.WriteFile(filepath.Join(state, ".config", "hearth", "config.toml"), []byte("drain_timeout = \"1s\"\n"), 0o600)
	cs := runClient(t, env, nil, "", filepath.Join(bin.dir, "hostedserver"))
	before := daemonsIn(runtime)
	if len(before) != 1 {
		t.Fatalf("daemons %v", before)
	}
	go func() { // in flight through the drain
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs.CallTool(ctx, &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 20000}})
	}()
	time.Sleep(300 * time.Millisecond)

	restart := exec.Command(bin.hearthd, "restart")
	restart.Env = env
	var out lockedBuffer
	restart.Stdout, restart.Stderr = &out, &out
	start := time.Now()
	if err := restart.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- restart.Wait() }()
	// The successor: a daemon that is neither the old one nor the command.
	var successor int
	for deadline := time.Now().Add(20 * time.Second); successor == 0; time.Sleep(time.Millisecond) {
		for _, pid := range daemonsIn(runtime) {
			if !slices.Contains(before, pid) && pid != restart.Process.Pid {
				successor = pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no successor started; restart said: %s", out.String())
		}
	}
	syscall.Kill(successor, syscall.SIGKILL)
	// The client's shim gets a daemon back (autostart) once the old one
	// has drained.
	go func() {
		for i := 0; i < 100; i++ {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := cs.Ping(ctx, nil)
			cancel()
			if err == nil && len(daemonsIn(runtime)) > 0 && !slices.Contains(daemonsIn(runtime), before[0]) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(45 * time.Second):
		restart.Process.Kill()
		t.Fatalf("hearthd restart still waits %v after its successor died: %s", time.Since(start), out.String())
	}
	said := out.String()
	if err == nil || !strings.Contains(said, "exited before it served") {
		t.Fatalf("hearthd restart: %v\n%s", err, said)
	}
	t.Logf("hearthd restart took %v: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(said))
}
