//go:build unix

package test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOneDaemonWhateverXDG: a user whose shell profile sets XDG_DATA_HOME
// and XDG_CONFIG_HOME runs two clients at once: the Go SDK client, which
// passes its server the whole environment, and the TypeScript SDK client,
// whose default environment drops every XDG variable. Both reach one
// daemon on one data directory, a memory added through either is found
// through the other, and the settings in force are those of the config
// file `hearthd status` names (docs/decisions/0029-one-place-per-user.md).
func TestOneDaemonWhateverXDG(t *testing.T) {
	needNode(t)
	user := shortTempDir(t)
	runtime := shortTempDir(t)
	xdg := shortTempDir(t)
	t.Cleanup(func() { killDaemonsOfHome(user) })
	base := cleanEnv(user)
	full := append(append([]string(nil), base...), "XDG_RUNTIME_DIR="+runtime,
		"XDG_DATA_HOME="+filepath.Join(xdg, "data"), "XDG_CONFIG_HOME="+filepath.Join(xdg, "config"), "XDG_STATE_HOME="+filepath.Join(xdg, "state"))
	// The user's config file, and another where XDG_CONFIG_HOME points.
	writeFile := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(user, ".config", "hearth", "config.toml")
	writeFile(conf, "max_batch = 7\n")
	writeFile(filepath.Join(xdg, "config", "hearth", "config.toml"), "max_batch = 9\n")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The Go client first: it starts the daemon with the XDG variables set.
	shimCmd := exec.Command(bin.hearth)
	shimCmd.Env = full
	client := mcp.NewClient(&mcp.Implementation{Name: "xdg-go", Version: "1"}, nil)
	goClient, err := client.Connect(ctx, &mcp.CommandTransport{Command: shimCmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { goClient.Close() })
	ts := startTSRepl(t, base, user, bin.hearth)

	if res := callTool(t, goClient, "add_memory", map[string]any{"text": "the go client saw a numbat"}); res.IsError {
		t.Fatalf("add_memory: %+v", res)
	}
	ts.call("add_memory", map[string]any{"text": "the typescript client saw a quoll"})
	for _, word := range []string{"numbat", "quoll"} {
		if st := structured(t, callTool(t, goClient, "search_memory", map[string]any{"query": word})); st["count"] != float64(1) {
			t.Fatalf("search_memory %q through the Go client: %v", word, st)
		}
		if st := ts.call("search_memory", map[string]any{"query": word}); st["count"] != float64(1) {
			t.Fatalf("search_memory %q through the TypeScript client: %v", word, st)
		}
	}
	dataDir := filepath.Join(user, ".local", "share", "hearth")
	if owners := processesWithOpen(filepath.Join(dataDir, "memory.db")); len(owners) != 1 {
		t.Fatalf("%s/memory.db is open in %v; want one process", dataDir, owners)
	}
	if _, err := os.Stat(filepath.Join(xdg, "data", "hearth")); err == nil {
		t.Fatal("a data directory was made under XDG_DATA_HOME")
	}

	// The settings in force are the file's that status names, for both.
	out := statusJSON(t, full)
	var st struct {
		Home   string `json:"home"`
		Places struct {
			Data, Config struct{ Path, Why string }
		} `json:"places"`
		Settings struct {
			File string `json:"file"`
			Keys []struct{ Key, Value, Source string }
		} `json:"settings"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatal(err)
	}
	if st.Home != dataDir || st.Places.Data.Path != dataDir || st.Places.Config.Path != conf || st.Settings.File != conf ||
		!strings.Contains(st.Places.Data.Why, "XDG_DATA_HOME is not consulted") {
		t.Fatalf("status places: %s", out)
	}
	for _, k := range st.Settings.Keys {
		if k.Key == "max_batch" && (k.Value != "7" || k.Source != "file "+conf) {
			t.Fatalf("max_batch in force: %+v", k)
		}
	}
	eight := map[string]any{"schema": "shader", "assets": make([]map[string]any, 8)}
	if r := structured(t, callTool(t, goClient, "validate_many", eight)); r["reason"] != "unsupported" || !strings.Contains(r["detail"].(string), "MCP_MAX_BATCH=7") {
		t.Fatalf("validate_many of 8 through the Go client, max_batch 7 in the file: %v", r)
	}
	if r := ts.call("validate_many", eight); r["reason"] != "unsupported" || !strings.Contains(r["detail"].(string), "MCP_MAX_BATCH=7") {
		t.Fatalf("validate_many of 8 through the TypeScript client, max_batch 7 in the file: %v", r)
	}
	// The human view says where and why, and what this shell's XDG
	// variables name that is not used.
	cmd := exec.Command(bin.hearthd, "status")
	cmd.Env = full
	out, _ = cmd.Output()
	human := strings.Join(strings.Fields(string(out)), " ")
	for _, want := range []string{"home " + dataDir + " (the default under your home directory", "config " + conf,
		filepath.Join(xdg, "config", "hearth", "config.toml") + " (from XDG_CONFIG_HOME) is not read"} {
		if !strings.Contains(human, want) {
			t.Fatalf("hearthd status lacks %q:\n%s", want, human)
		}
	}
}

// TestDataDirectoryIsPrivate: a data directory the user made first with
// mode 0755 is closed to others when a daemon takes it, and no file the
// daemon writes there (the memory database and its -wal and -shm, the
// graph, the owner files, the format marker, the index snapshot) can be
// read by another user.
func TestDataDirectoryIsPrivate(t *testing.T) {
	home := filepath.Join(t.TempDir(), "hearth")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(home, 0o755) // whatever the umask
	d := startDaemon(t, "HEARTH_HOME="+home)
	c := dialMCP(t, d.socket)
	for _, text := range []string{"the wombat digs", "the echidna sleeps"} {
		c.add(text)
	}
	if r := c.call("create_entities", map[string]any{"entities": []any{map[string]any{"name": "wombat", "entityType": "animal", "observations": []any{"digs"}}}}); r.Result == nil || r.Result.IsError {
		t.Fatalf("create_entities: %+v", r)
	}
	d.stop(t)
	if !strings.Contains(d.stderr.String(), "narrowed it to 0700") {
		t.Errorf("the daemon did not say it closed the directory:\n%s", d.stderr.String())
	}
	var files int
	filepath.Walk(home, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		files++
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %#o: open to other users", p, fi.Mode().Perm())
		}
		return nil
	})
	if files < 4 {
		t.Fatalf("only %d entries under %s: did the daemon write?", files, home)
	}
}

// TestKilledDaemonLeftovers: a daemon killed with SIGKILL leaves its owner
// record, socket and readiness file. `hearthd status` then exits 1 saying
// that no daemon serves and that those files are stale, not naming a dead
// socket's "connection refused"; the next daemon of the data directory,
// even one whose environment puts its own socket elsewhere, removes them.
func TestKilledDaemonLeftovers(t *testing.T) {
	home := filepath.Join(t.TempDir(), "hearth")
	first := startDaemon(t, "HEARTH_HOME="+home)
	first.cmd.Process.Kill()
	<-first.done
	first.done <- nil // for the cleanup's receive
	for _, p := range []string{first.socket, first.ready} {
		if _, err := os.Lstat(p); err != nil {
			t.Fatalf("SIGKILL left no %s: %v", p, err)
		}
	}
	cmd := exec.Command(bin.hearthd, "status")
	cmd.Env = first.cmd.Env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("hearthd status after SIGKILL: %v\n%s", err, out)
	}
	for _, want := range []string{"no hearth daemon serves " + home, "ended without cleaning up", first.socket, first.ready, "the next daemon removes them"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("hearthd status lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "connection refused") {
		t.Fatalf("hearthd status names the dead socket's error:\n%s", out)
	}

	next := startDaemon(t, "HEARTH_HOME="+home) // another runtime directory
	if next.socket == first.socket {
		t.Fatal("the test wants the next daemon's socket elsewhere")
	}
	for _, p := range []string{first.socket, first.ready} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("the next daemon left the stale %s", p)
		}
	}
	cmd = exec.Command(bin.hearthd, "status")
	cmd.Env = first.cmd.Env // found through the data directory
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), next.socket) {
		t.Fatalf("hearthd status with the next daemon: %v\n%s", err, out)
	}
	next.stop(t)
}

// TestMissingSchemaRoot: a config file naming a schema directory the user
// does not have is reported at start (without a stack trace), in `hearthd
// status` and in the schema tools' error, each saying how to get the
// embedded catalog back.
func TestMissingSchemaRoot(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "src", "synesthetic-schemas", "jsonschema")
	conf := filepath.Join(dir, "config.toml")
	os.WriteFile(conf, []byte("schemas_dir = \""+missing+"\"\n"), 0o600)
	d := startDaemon(t, "HEARTH_CONFIG="+conf)
	hint := "schemas_dir " + missing + " does not exist: create it, or remove schemas_dir from the config file"
	c := dialMCP(t, d.socket)
	r := c.call("list_schemas", map[string]any{})
	if r.Result == nil || !r.Result.IsError || !strings.Contains(fmt.Sprint(r.Result.Content), hint) ||
		!strings.Contains(fmt.Sprint(r.Result.Content), "embedded synesthetic-schemas") {
		t.Fatalf("list_schemas with a missing schemas_dir: %+v", r)
	}
	cmd := exec.Command(bin.hearthd, "status")
	cmd.Env = d.cmd.Env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), hint) {
		t.Fatalf("hearthd status: %v\n%s", err, out)
	}
	d.stop(t)
	if log := d.stderr.String(); !strings.Contains(log, hint) || strings.Contains(log, "stacktrace") {
		t.Fatalf("the daemon's log at start:\n%s", log)
	}
}
