//go:build unix

package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestShimClientReachesNoControlMethod: a client of a shim, relayed
// (HEARTH_SHIM_RELAY, the only mode on macOS and Windows) or handed over,
// that sends hearth's own hello itself (as a shim's, with no version) and
// then the control methods gets them refused: $/hearth/handover starts no
// program it names, $/hearth/servers forgets nothing, $/hearth/stop stops
// nothing, and the daemon serves on, the same process. What a connection may do is decided once,
// by how it arrived and its first frame, the shim's hello
// (docs/threat-model.md).
func TestShimClientReachesNoControlMethod(t *testing.T) {
	for _, relay := range []string{"1", ""} {
		name := map[string]string{"1": "relay", "": "handed over"}[relay]
		t.Run(name, func(t *testing.T) {
			if relay == "" && shimTransport() == "relay" {
				t.Skip("this run's shims relay")
			}
			env, runtime, _ := shimEnv(t, "HEARTH_SHIM_RELAY="+relay)
			dir := t.TempDir()
			marker := filepath.Join(dir, "ran")
			evil := filepath.Join(dir, "evil")
			if err := os.WriteFile(evil, []byte(fmt.Sprintf("#!/bin/sh\necho \"$@\" > %s\n", marker)), 0o755); err != nil {
				t.Fatal(err)
			}
			p := startShim(t, env)
			p.initialize()
			before := daemonsIn(runtime)
			p.send(`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{}}`)
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"h","method":"$/hearth/handover","params":{"exe":%q}}`, evil))
			p.send(`{"jsonrpc":"2.0","id":"s","method":"$/hearth/servers","params":{"action":"forget","name":"abcd"}}`)
			p.send(`{"jsonrpc":"2.0","id":"x","method":"$/hearth/stop","params":{}}`)
			for _, id := range []string{"h", "s", "x"} {
				m := p.recvID(id)
				e, _ := m["error"].(map[string]any)
				if e == nil || e["code"] != float64(-32601) {
					t.Fatalf("%s through the shim was answered %v", id, m)
				}
			}
			p.send(`{"jsonrpc":"2.0","id":"st","method":"tools/call","params":{"name":"daemon_status","arguments":{}}}`)
			if m := p.recvID("st"); m["result"] == nil {
				t.Fatalf("daemon_status after the refusals: %v", m)
			}
			time.Sleep(200 * time.Millisecond) // a successor started would have run by now
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the program the client named ran")
			}
			if now := daemonsIn(runtime); len(now) != 1 || len(before) != 1 || now[0] != before[0] {
				t.Fatalf("daemons before %v, after %v", before, now)
			}
		})
	}
}

// TestHandOverRunsOnlyTheDaemonsOwnExecutable: even the socket's own
// client, which reaches $/hearth/handover, cannot name the program the
// daemon hands over to: one that is not the daemon's own executable is
// refused, saying which that is, and does not run.
func TestHandOverRunsOnlyTheDaemonsOwnExecutable(t *testing.T) {
	d := startDaemon(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	evil := filepath.Join(dir, "evil")
	if err := os.WriteFile(evil, []byte(fmt.Sprintf("#!/bin/sh\necho \"$@\" > %s\n", marker)), 0o755); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, d.socket)
	c.initialize()
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"$/hearth/handover","params":{"exe":%q}}`, evil))
	if line := c.recv(); !strings.Contains(line, `"error"`) || !strings.Contains(line, "its own executable") {
		t.Fatalf("handover to another program: %s", line)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if line := c.recv(); !strings.Contains(line, `"result"`) {
		t.Fatalf("ping after: %s", line)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the program named ran")
	}
}
