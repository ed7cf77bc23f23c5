//go:build linux

package test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestHostileCatalogEntriesAreNotServed: after a hosted server was
// catalogued, its entry is tampered with as another local user could have
// while the state directory was open to them (or as a buggy writer might):
// a forged tool in a file another user owns (or may write), the entry
// replaced by a link to /dev/zero, an initResult that is no
// InitializeResult, junk list pages, invalid UTF-8, and a FIFO beside it.
// Each time a new daemon serves the server's client live (the forged tool
// is never listed, the initialize result is the server's own), and status
// and the client answer at once: a FIFO holds no lock. Each tampered entry
// is replaced by the live server's.
func TestHostileCatalogEntriesAreNotServed(t *testing.T) {
	env, _, state := shimEnv(t)
	server := filepath.Join(state, "hostedserver")
	b, err := os.ReadFile(filepath.Join(bin.dir, "hostedserver"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(server, b, 0o700)
	cs := runClient(t, env, nil, "", server)
	real := toolNames(t, cs)
	cs.Close()
	waitCatalogued(t, env, 1)
	stopDaemon(t, env)
	waitScriptGone(t, "hostedserver", server)
	entries, _ := filepath.Glob(filepath.Join(state, ".local", "state", "hearth", "catalog", "*.json"))
	if len(entries) != 1 {
		t.Fatalf("catalog entries: %v", entries)
	}
	entry := entries[0]
	good, _ := os.ReadFile(entry)
	edited := func(edit func(map[string]any)) []byte {
		var m map[string]any
		json.Unmarshal(good, &m)
		edit(m)
		out, _ := json.Marshal(m)
		return out
	}
	forged := edited(func(m map[string]any) {
		m["lists"] = map[string]any{"tools/list": []any{map[string]any{"tools": []any{map[string]any{"name": "FORGED_by_uid_65534", "inputSchema": map[string]any{"type": "object"}}}}}}
	})
	fifo := filepath.Join(filepath.Dir(entry), "aaaa0000.json")
	cases := []struct {
		name  string
		plant func()
	}{
		{"another user's, with a forged tool", func() {
			os.WriteFile(entry, forged, 0o600)
			if os.Geteuid() == 0 {
				os.Chown(entry, 65534, 65534)
			} else {
				os.Chmod(entry, 0o666)
			}
		}},
		{"writable by others, with a forged tool", func() { os.WriteFile(entry, forged, 0o600); os.Chmod(entry, 0o666) }},
		{"a link to another file with a forged tool", func() {
			other := filepath.Join(t.TempDir(), "theirs.json")
			os.WriteFile(other, forged, 0o600)
			os.Remove(entry)
			os.Symlink(other, entry)
		}},
		{"a link to /dev/zero", func() { os.Remove(entry); os.Symlink("/dev/zero", entry) }},
		{"an initResult that is a string", func() {
			os.WriteFile(entry, edited(func(m map[string]any) { m["initResult"] = "FORGED_by_uid_65534" }), 0o600)
		}},
		{"an initResult that is an array", func() {
			os.WriteFile(entry, edited(func(m map[string]any) { m["initResult"] = []any{"FORGED_by_uid_65534"} }), 0o600)
		}},
		{"junk list pages", func() {
			os.WriteFile(entry, edited(func(m map[string]any) { m["lists"] = map[string]any{"tools/list": []any{"FORGED_by_uid_65534", 7}} }), 0o600)
		}},
		{"invalid UTF-8", func() {
			os.WriteFile(entry, bytes.Replace(forged, []byte("FORGED_by_uid_65534"), []byte("FORGED_by_uid_65534\xff"), 1), 0o600)
		}},
		{"a FIFO beside it", func() { os.WriteFile(entry, forged, 0o600); os.Chmod(entry, 0o666); unix.Mkfifo(fifo, 0o600) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.plant()
			defer os.Remove(fifo)
			done := make(chan struct{})
			go func() {
				defer close(done)
				cs := runClient(t, env, nil, "", server)
				defer cs.Close()
				init := cs.InitializeResult()
				if init == nil || init.ServerInfo == nil || init.ServerInfo.Name == "" || init.ProtocolVersion == "" {
					t.Errorf("initialize result: %+v", init)
				}
				if got := toolNames(t, cs); !slices.Equal(got, real) {
					t.Errorf("tools %v, the server's own %v", got, real)
				}
				if len(processesRunning(server)) == 0 {
					t.Error("the server did not start: the tools came from the tampered entry")
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, bin.hearthd, "status", "--json")
				cmd.Env = env
				if out, err := cmd.Output(); err != nil {
					t.Errorf("hearthd status: %v %s", err, out)
				}
			}()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("the client or status hung on the tampered catalog")
			}
			waitCatalogued(t, env, 1) // the live server's entry replaces it
			stopDaemon(t, env)
			waitScriptGone(t, "hostedserver", server)
			if fi, err := os.Lstat(entry); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("the tampered entry was not replaced: %v %v", fi, err)
			}
		})
	}
}
