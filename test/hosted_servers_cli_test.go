//go:build unix

package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A server goes by the name its client's entry gives it (`hearth run
// --name`): `hearthd servers` (no subcommand needed) lists it with its
// state, clients and instances; two instances of one name that differ only
// in a variable's value are told apart by that, never by the value, in
// the list, in `hearthd status NAME` and in the refusal of the ambiguous
// name; a key prefix picks one; a name of one server restarts it
// (docs/decisions/0058-names-and-reload.md).
func TestHostedServersGoByTheirEntriesNames(t *testing.T) {
	env, _, _ := shimEnv(t)
	server := filepath.Join(bin.dir, "hostedserver")
	for _, token := range []string{"secret-value-a", "secret-value-b"} {
		cs := runClientWith(t, append(env, "MY_TOKEN="+token), nil, "2025-11-25", []string{"--name", "tracker", "--env", "MY_TOKEN", "--", server})
		callText(t, cs, "echo", map[string]any{"text": "x"})
	}
	other := runClientWith(t, env, nil, "2025-11-25", []string{"--name", "notes", "--env=", "--", server})
	callText(t, other, "echo", map[string]any{"text": "x"})

	out, code := runHearthdCmd(t, env, "servers")
	t.Logf("hearthd servers:\n%s", out)
	if code != 0 || strings.Contains(out, "usage") || !strings.Contains(out, "tracker") || !strings.Contains(out, "notes") ||
		!strings.Contains(out, "variables MY_TOKEN with values of its own") || strings.Contains(out, "secret-value") {
		t.Fatalf("hearthd servers exit %d:\n%s", code, out)
	}
	out, code = runHearthdCmd(t, env, "servers", "list", "--json")
	var groups []struct {
		Name      string
		State     string
		Clients   int
		Instances []struct{ Key, Differs string }
	}
	if err := json.Unmarshal([]byte(out), &groups); code != 0 || err != nil || len(groups) != 2 {
		t.Fatalf("hearthd servers list --json exit %d: %v\n%s", code, err, out)
	}
	var keys []string
	for _, g := range groups {
		if g.Name == "tracker" {
			if len(g.Instances) != 2 || g.Clients != 2 || g.State != "2 running" {
				t.Fatalf("tracker: %+v", g)
			}
			for _, in := range g.Instances {
				keys = append(keys, in.Key)
			}
		}
	}
	out, code = runHearthdCmd(t, env, "status", "tracker")
	if code != 0 || !strings.Contains(out, keys[0]) || !strings.Contains(out, keys[1]) || strings.Contains(out, "notes") || strings.Contains(out, "secret-value") {
		t.Fatalf("hearthd status tracker exit %d:\n%s", code, out)
	}
	if out, code = runHearthdCmd(t, env, "status", "nosuch"); code == 0 || !strings.Contains(out, "tracker") {
		t.Fatalf("hearthd status nosuch exit %d:\n%s", code, out)
	}
	out, code = runHearthdCmd(t, env, "servers", "restart", "tracker")
	if code == 0 || !strings.Contains(out, "with values of its own") || !strings.Contains(out, keys[0]) || strings.Contains(out, "secret-value") {
		t.Fatalf("restart of the ambiguous name exit %d:\n%s", code, out)
	}
	if out, code = runHearthdCmd(t, env, "servers", "restart", keys[0][:8]); code != 0 || !strings.Contains(out, "restarted 1 instance") {
		t.Fatalf("restart by key prefix exit %d:\n%s", code, out)
	}
	if out, code = runHearthdCmd(t, env, "servers", "restart", "notes"); code != 0 || !strings.Contains(out, "restarted 1 instance") {
		t.Fatalf("restart by the entry's name exit %d:\n%s", code, out)
	}
	if out, code = runHearthdCmd(t, env, "servers", "frobnicate"); code != 2 || !strings.Contains(out, "usage") {
		t.Fatalf("hearthd servers frobnicate exit %d:\n%s", code, out)
	}
}

// `hearthd reload` reloads the serving daemon's config file: a file that
// cannot be used is refused with its line (exit 1), the previous settings
// serve on, and `hearthd status` shows the problem until a reload succeeds
// (docs/decisions/0058-names-and-reload.md).
func TestHearthdReload(t *testing.T) {
	env, _, state := shimEnv(t)
	cfg := filepath.Join(state, ".config", "hearth", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	if err := os.WriteFile(cfg, []byte("drain_timeout = \"5s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	callTool(t, shimSession(t, env), "daemon_status", map[string]any{})
	if out, code := runHearthdCmd(t, env, "reload"); code != 0 || !strings.Contains(out, "reloaded") {
		t.Fatalf("hearthd reload exit %d:\n%s", code, out)
	}
	os.WriteFile(cfg, []byte("drain_timeout = \"5s\"\n[servers.x\ncommand = \"y\"\n"), 0o600)
	out, code := runHearthdCmd(t, env, "reload")
	if code != 1 || !strings.Contains(out, "did not apply") || !strings.Contains(out, "line 2") || !strings.Contains(out, cfg) {
		t.Fatalf("hearthd reload of a broken file exit %d:\n%s", code, out)
	}
	problems := func() []string {
		var st struct{ Problems []string }
		if err := json.Unmarshal(statusJSON(t, env), &st); err != nil {
			t.Fatal(err)
		}
		return st.Problems
	}
	if p := problems(); len(p) != 1 || !strings.Contains(p[0], "line 2") || !strings.Contains(p[0], "did not apply") {
		t.Fatalf("status after the failed reload: %q", p)
	}
	os.WriteFile(cfg, []byte("drain_timeout = \"6s\"\n"), 0o600)
	if out, code := runHearthdCmd(t, env, "reload"); code != 0 {
		t.Fatalf("hearthd reload of the fixed file exit %d:\n%s", code, out)
	}
	if p := problems(); len(p) != 0 {
		t.Fatalf("status after a reload that applied: %q", p)
	}
	if out, code := runHearthdCmd(t, env, "reload", "now"); code != 2 || !strings.Contains(out, "usage") {
		t.Fatalf("hearthd reload now exit %d:\n%s", code, out)
	}
}
