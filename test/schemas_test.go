//go:build unix

package test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// corpus returns the synesthetic schema and example roots as directories:
// the embedded default catalog's copy in pkg/schemas (its SOURCE says which
// release), so the daemon loads them as a user's configured roots. They are
// in the repository: a missing one fails the test.
func corpus(t *testing.T) (schemasDir, examplesDir string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "pkg", "schemas", "synesthetic"))
	if err != nil {
		t.Fatal(err)
	}
	schemasDir, examplesDir = filepath.Join(root, "jsonschema"), filepath.Join(root, "examples")
	for _, d := range []string{schemasDir, examplesDir} {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("the synesthetic corpus is missing: %v", err)
		}
	}
	return schemasDir, examplesDir
}

// TestSeed001ClientOverSocket: a client of the schema tools that never opens
// an MCP session sends plain JSON-RPC methods, without initialize, and gets
// the tools' result objects themselves; the deprecated validate alias
// answers identically and logs its use.
func TestSeed001ClientOverSocket(t *testing.T) {
	s, e := corpus(t)
	d := startDaemon(t, "SYN_SCHEMAS_DIR="+s, "SYN_EXAMPLES_DIR="+e)
	if log := d.stderr.String(); !strings.Contains(log, "schemas_dir="+s) || !strings.Contains(log, "examples_dir="+e) {
		t.Fatalf("readiness line lacks the roots:\n%s", log)
	}
	c := dialRaw(t, d.socket)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"list_schemas"}`)
	var ls struct {
		Result struct {
			OK      bool `json:"ok"`
			Schemas []struct{ Name string }
		}
	}
	json.Unmarshal([]byte(c.recv()), &ls)
	if !ls.Result.OK || len(ls.Result.Schemas) != 9 || ls.Result.Schemas[0].Name != "control" {
		t.Fatalf("list_schemas: %+v", ls)
	}
	pretty, _ := os.ReadFile(filepath.Join(e, "SynestheticAsset_Example1.json"))
	var asset bytes.Buffer
	json.Compact(&asset, pretty) // one frame is one line
	c.send(`{"jsonrpc":"2.0","id":2,"method":"validate_asset","params":{"schema":"nested-synesthetic-asset","asset":` + asset.String() + `}}`)
	if line := c.recv(); line != `{"jsonrpc":"2.0","id":2,"result":{"ok":true}}` {
		t.Fatalf("validate_asset: %s", line)
	}
	bad := `{"schema":"tone","asset":{"name":7}}`
	c.send(`{"jsonrpc":"2.0","id":3,"method":"validate_asset","params":` + bad + `}`)
	first := strings.Replace(c.recv(), `"id":3`, `"id":0`, 1)
	c.send(`{"jsonrpc":"2.0","id":4,"method":"validate","params":` + bad + `}`)
	second := strings.Replace(c.recv(), `"id":4`, `"id":0`, 1)
	if first != second || !strings.Contains(first, `"reason":"validation_failed"`) {
		t.Fatalf("alias differs or did not fail:\n%s\n%s", first, second)
	}
	c.send(`{"jsonrpc":"2.0","id":5,"method":"validate_asset","params":{"asset":{}}}`)
	if line := c.recv(); !strings.Contains(line, "schema is required") {
		t.Fatalf("missing schema: %s", line)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(d.stderr.String(), `"reason":"deprecated_alias"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no deprecation log:\n%s", d.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSIGHUPReloadsCatalog: a schema added to the root is served after
// SIGHUP; a broken file is left out, logged and reported while the rest
// serves; a root gone as a whole leaves the old catalog serving.
func TestSIGHUPReloadsCatalog(t *testing.T) {
	root := filepath.Join(t.TempDir(), "schemas")
	os.Mkdir(root, 0o755)
	os.WriteFile(filepath.Join(root, "a.schema.json"), []byte(`{"type":"object"}`), 0o644)
	d := startDaemon(t, "SYN_SCHEMAS_DIR="+root, "SYN_EXAMPLES_DIR=")
	c := dialRaw(t, d.socket)
	count := func() int {
		c.send(`{"jsonrpc":"2.0","id":1,"method":"list_schemas"}`)
		var r struct{ Result struct{ Schemas []any } }
		json.Unmarshal([]byte(c.recv()), &r)
		return len(r.Result.Schemas)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d schemas", n)
	}
	os.WriteFile(filepath.Join(root, "b.schema.json"), []byte(`{"type":"string"}`), 0o644)
	d.cmd.Process.Signal(syscall.SIGHUP)
	waitUntil(t, func() bool { return count() == 2 })

	os.WriteFile(filepath.Join(root, "c.schema.json"), []byte(`{"type":`), 0o644)
	os.WriteFile(filepath.Join(root, "d.schema.json"), []byte(`{"type":"integer"}`), 0o644)
	d.cmd.Process.Signal(syscall.SIGHUP)
	waitUntil(t, func() bool { return count() == 3 })
	waitUntil(t, func() bool {
		return strings.Contains(d.stderr.String(), "a schema file did not load") && strings.Contains(d.stderr.String(), "c.schema.json")
	})
	c.send(`{"jsonrpc":"2.0","id":2,"method":"validate_asset","params":{"asset":1,"schema":"c"}}`)
	if r := c.recv(); !strings.Contains(r, `schema \"c\" did not load: c.schema.json: not JSON`) {
		t.Fatalf("the broken schema by name: %s", r)
	}

	os.Rename(root, root+".away")
	d.cmd.Process.Signal(syscall.SIGHUP)
	waitUntil(t, func() bool { return strings.Contains(d.stderr.String(), "reload failed") })
	if n := count(); n != 3 {
		t.Fatalf("a failed reload changed the catalog: %d", n)
	}
}

// TestMissingExamplesRoot: an examples root set but missing does not take
// the schemas down; the example tools and daemon_status say what is wrong.
func TestMissingExamplesRoot(t *testing.T) {
	s, _ := corpus(t)
	missing := filepath.Join(t.TempDir(), "no-examples")
	d := startDaemon(t, "SYN_SCHEMAS_DIR="+s, "SYN_EXAMPLES_DIR="+missing)
	c := dialRaw(t, d.socket)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"validate_asset","params":{"asset":{"name":7},"schema":"tone"}}`)
	if r := c.recv(); !strings.Contains(r, `"reason":"validation_failed"`) || !strings.Contains(r, `"path":"/name"`) {
		t.Fatalf("the schemas do not serve: %s", r)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"list_examples"}`)
	if r := c.recv(); !strings.Contains(r, "CAPABILITY_MISSING") || !strings.Contains(r, missing) {
		t.Fatalf("list_examples: %s", r)
	}
	out := statusJSON(t, d.cmd.Env)
	var st struct{ Problems []string }
	if err := json.Unmarshal(out, &st); err != nil || len(st.Problems) != 1 ||
		!strings.Contains(st.Problems[0], "the examples did not load") || !strings.Contains(st.Problems[0], missing) {
		t.Fatalf("daemon_status problems: %q (%v)", st.Problems, err)
	}
	cmd := exec.Command(bin.hearthd, "status")
	cmd.Env = d.cmd.Env
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "problems (1):\n  the examples did not load") {
		t.Fatalf("hearthd status: %v\n%s", err, out)
	}
	// Logged as the catalog loaded (after the daemon was ready: it loads
	// in the background, docs/architecture.md, "The daemon's start").
	waitUntil(t, func() bool { return strings.Contains(d.stderr.String(), "the examples root did not load") })
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestValidateCommand: `hearthd validate` works without a daemon, with its
// exit codes: 0 valid, 1 invalid, 2 unreadable.
func TestValidateCommand(t *testing.T) {
	s, e := corpus(t)
	run := func(args ...string) int {
		cmd := exec.Command(bin.hearthd, append([]string{"validate"}, args...)...)
		cmd.Env = append(os.Environ(), "SYN_SCHEMAS_DIR="+s, "SYN_EXAMPLES_DIR="+e)
		out, _ := cmd.Output()
		if cmd.ProcessState.ExitCode() != 2 && !json.Valid(out) {
			t.Fatalf("stdout is not the JSON result: %q", out)
		}
		return cmd.ProcessState.ExitCode()
	}
	if code := run(filepath.Join(e, "Tone_Example.json")); code != 0 {
		t.Fatalf("valid example: exit %d", code)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"name":7}`), 0o644)
	if code := run(bad, "--schema", "tone"); code != 1 {
		t.Fatalf("invalid: exit %d", code)
	}
	if code := run(filepath.Join(t.TempDir(), "none.json")); code != 2 {
		t.Fatalf("missing file: exit %d", code)
	}
}

// TestSchemaResourcesThroughGoSDK: schemas and examples are MCP resources,
// listed and read through the official client via the shim.
func TestSchemaResourcesThroughGoSDK(t *testing.T) {
	s, e := corpus(t)
	env, _, _ := shimEnv(t, configFile(t, "schemas_dir = %q\nexamples_dir = %q\n", s, e))
	cs := shimSession(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	if len(uris) != 24 { // nine schemas, fifteen examples
		t.Fatalf("%d resources: %v", len(uris), uris)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "hearth://schemas/tone"})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "tone.schema.json") {
		t.Fatalf("read: %+v %v", res, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "hearth://examples/../jsonschema/tone.schema.json"}); err == nil {
		t.Fatal("a traversal URI was served")
	}
}

// configFile writes a config.toml (format and args as fmt.Sprintf) and
// returns the HEARTH_CONFIG=... variable that names it.
func configFile(t *testing.T, format string, args ...any) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(format, args...)), 0o600); err != nil {
		t.Fatal(err)
	}
	return "HEARTH_CONFIG=" + path
}

// TestEmbeddedCatalogThenConfigAndSIGHUP: a daemon autostarted by a client
// with no configuration validates against the embedded catalog; a client's
// own SYN_SCHEMAS_DIR does not reconfigure it; a config file change plus
// SIGHUP changes the catalog for every client at once.
func TestEmbeddedCatalogThenConfigAndSIGHUP(t *testing.T) {
	env, _, state := shimEnv(t)
	conf := filepath.Join(state, ".config", "hearth", "config.toml") // under shimEnv's HOME
	a := shimSession(t, env)
	shader, err := os.ReadFile(filepath.Join("..", "pkg", "schemas", "synesthetic", "examples", "Shader_Example.json"))
	if err != nil {
		t.Fatal(err)
	}
	var asset map[string]any
	json.Unmarshal(shader, &asset)
	if st := structured(t, callTool(t, a, "validate_asset", map[string]any{"schema": "shader", "asset": asset})); st["ok"] != true {
		t.Fatalf("embedded catalog: %v", st)
	}
	// A second client that sets SYN_SCHEMAS_DIR for itself changes nothing.
	own := t.TempDir()
	os.WriteFile(filepath.Join(own, "widget.schema.json"), []byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"widget","type":"object","required":["w"]}`), 0o600)
	b := shimSession(t, append(env, "SYN_SCHEMAS_DIR="+own))
	if st := structured(t, callTool(t, b, "validate_asset", map[string]any{"schema": "shader", "asset": asset})); st["ok"] != true {
		t.Fatalf("a client's environment reconfigured the shared daemon: %v", st)
	}
	// The config file names the widget root; SIGHUP; both clients see it.
	os.MkdirAll(filepath.Dir(conf), 0o700)
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("schemas_dir = %q\n", own)), 0o600); err != nil {
		t.Fatal(err)
	}
	pid := int(structured(t, callTool(t, a, "daemon_status", map[string]any{}))["pid"].(float64))
	syscall.Kill(pid, syscall.SIGHUP)
	for _, cs := range []*mcp.ClientSession{a, b} {
		waitUntil(t, func() bool {
			st := structured(t, callTool(t, cs, "validate_asset", map[string]any{"schema": "widget", "asset": map[string]any{}}))
			return st["ok"] == false && !strings.Contains(fmt.Sprint(st), "unknown schema") // {} lacks "w"
		})
		st := structured(t, callTool(t, cs, "validate_asset", map[string]any{"schema": "shader", "asset": asset}))
		if st["ok"] != false || !strings.Contains(fmt.Sprint(st), "widget") {
			t.Fatalf("after SIGHUP shader should be unknown, listing widget: %v", st)
		}
	}
}
