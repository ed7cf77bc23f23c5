package schemas

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const embeddedNames = "control, control-bundle, haptic, modulation, rule, rule-bundle, shader, synesthetic-asset, tone"

// TestNoRootsServesEmbedded: with no schema root configured and none under
// the working directory, the embedded catalog serves: nine schemas, fifteen
// examples, each valid against its schema.
func TestNoRootsServesEmbedded(t *testing.T) {
	t.Chdir(t.TempDir()) // no libs/synesthetic-schemas here
	fam, reg := openFamily(t, map[string]string{})
	schemas := call(t, reg, "list_schemas", map[string]any{})["schemas"].([]any)
	if len(schemas) != 9 {
		t.Fatalf("%d schemas: %v", len(schemas), schemas)
	}
	for _, s := range schemas {
		if v := s.(map[string]any)["version"]; v != EmbeddedVersion {
			t.Errorf("version %v: %v", v, s)
		}
	}
	examples := call(t, reg, "list_examples", map[string]any{})["examples"].([]any)
	if len(examples) != 15 {
		t.Fatalf("%d examples", len(examples))
	}
	for _, e := range examples {
		p := e.(map[string]any)["path"].(string)
		got := call(t, reg, "get_example", map[string]any{"path": p})
		if got["ok"] != true || got["validated"] != true || got["schema"] == "" {
			t.Errorf("%s: %v", p, got)
		}
		text, mime, err := fam.ReadResource(exampleURIPrefix + p)
		if err != nil || mime != "application/json" || !json.Valid([]byte(text)) {
			t.Errorf("resource %s: %v", p, err)
		}
		// And through validate_asset, as a client would send it.
		var doc any
		json.Unmarshal([]byte(text), &doc)
		if r := call(t, reg, "validate_asset", map[string]any{"asset": doc, "schema": got["schema"]}); r["ok"] != true {
			t.Errorf("%s: validate_asset %v", p, r)
		}
	}
	if got := strings.Join(fam.ReadyFields(), " "); got != "schemas_dir=embedded examples_dir=embedded" {
		t.Errorf("ready fields: %q", got)
	}
	if _, _, err := fam.ReadResource(schemaURIPrefix + "tone"); err != nil {
		t.Error(err)
	}
	// The embedded root refuses what a directory refuses.
	for _, p := range []string{"../jsonschema/tone.schema.json", "/etc/passwd", "a/../Tone_Example.json", "%2e%2e/x.json", `..\x.json`, "./Tone_Example.json"} {
		if r := call(t, reg, "get_example", map[string]any{"path": p}); r["ok"] != false || r["example"] != nil {
			t.Errorf("%q was served: %v", p, r)
		}
	}
	if r := call(t, reg, "get_example", map[string]any{"path": "missing.json"}); r["reason"] != "not_found" {
		t.Errorf("missing: %v", r)
	}
	r := call(t, reg, "validate_asset", map[string]any{"asset": map[string]any{}, "schema": "shaders"})
	want := "unknown schema: shaders; available: " + embeddedNames + " (from embedded synesthetic-schemas 0.7.3)"
	if !strings.Contains(mustJSON(r), want) {
		t.Errorf("got %s\nwant %s", mustJSON(r), want)
	}
}

// TestEmbeddedIsTheRelease: the embedded files are the release's, byte for
// byte: synesthetic/SHA256SUMS holds the SHA-256 of each file of the
// release (taken from the upstream files when they were copied, checkable
// with sha256sum -c), and the embedded set is exactly those files.
func TestEmbeddedIsTheRelease(t *testing.T) {
	sums, err := os.ReadFile("synesthetic/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // path under synesthetic/ → hex SHA-256
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("SHA256SUMS: a bad line %q", line)
		}
		want[name] = sum
	}
	n := 0
	err = fs.WalkDir(embedded, "synesthetic", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		got, _ := fs.ReadFile(embedded, p)
		name := strings.TrimPrefix(p, "synesthetic/")
		if sum := sha256.Sum256(got); hex.EncodeToString(sum[:]) != want[name] {
			t.Errorf("%s differs from the release (or is not one of its files)", p)
		}
		delete(want, name)
		n++
		return nil
	})
	if err != nil || n != 24 {
		t.Fatalf("%d embedded files (want 9 schemas + 15 examples): %v", n, err)
	}
	for name := range want {
		t.Errorf("%s of the release is not embedded", name)
	}
	if lic, err := os.ReadFile("synesthetic/LICENSE"); err != nil || !bytes.Contains(lic, []byte("MIT License")) {
		t.Fatalf("the license is not kept: %v", err)
	}
}

func TestRootsChoice(t *testing.T) {
	t.Chdir(t.TempDir())
	s, e := smallRoot(t)
	cases := []struct {
		name               string
		env                map[string]string
		schemas, examples  string // ReadyFields values
		nSchemas, nExample int
	}{
		{"none: embedded", map[string]string{}, "embedded", "embedded", 9, 15},
		{"schemas only: no embedded examples", map[string]string{"SYN_SCHEMAS_DIR": s}, s, "", 2, 0},
		{"examples only: embedded schemas", map[string]string{"SYN_EXAMPLES_DIR": e}, "embedded", e, 9, 2},
		{"both", map[string]string{"SYN_SCHEMAS_DIR": s, "SYN_EXAMPLES_DIR": e}, s, e, 2, 2},
	}
	for _, c := range cases {
		fam, _ := openFamily(t, c.env)
		cat := fam.Catalog()
		if got := strings.Join(fam.ReadyFields(), " "); got != "schemas_dir="+c.schemas+" examples_dir="+c.examples {
			t.Errorf("%s: %s", c.name, got)
		}
		if len(cat.Schemas()) != c.nSchemas || len(cat.Examples("all")) != c.nExample {
			t.Errorf("%s: %d schemas, %d examples", c.name, len(cat.Schemas()), len(cat.Examples("all")))
		}
	}
	// The working directory's submodule comes before the embedded catalog.
	os.MkdirAll("libs/synesthetic-schemas", 0o755)
	os.Symlink(s, "libs/synesthetic-schemas/jsonschema")
	fam, _ := openFamily(t, map[string]string{})
	if cat := fam.Catalog(); len(cat.Schemas()) != 2 || !strings.Contains(cat.Origin, "libs/synesthetic-schemas") || len(cat.Examples("all")) != 0 {
		t.Errorf("submodule: %q, %d schemas, %d examples", cat.Origin, len(cat.Schemas()), len(cat.Examples("all")))
	}
}

func TestUnknownSchemaNamesTheCatalog(t *testing.T) {
	fam, c := smallFamily(t)
	r := c("validate_asset", map[string]any{"asset": 1, "schema": "ghost"})
	want := "unknown schema: ghost; available: part, synesthetic-asset (from " + fam.Catalog().SchemasDir + " (schemas_dir, SYN_SCHEMAS_DIR))"
	if !strings.Contains(mustJSON(r), want) {
		t.Errorf("got %s\nwant %s", mustJSON(r), want)
	}
	// Many schemas: the first twenty, then how many more.
	dir := t.TempDir()
	for i := range 25 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%02d.schema.json", i)), []byte(`{}`), 0o644)
	}
	_, reg := openFamily(t, map[string]string{"SYN_SCHEMAS_DIR": dir})
	r = call(t, reg, "validate_asset", map[string]any{"asset": 1, "schema": "ghost"})
	if got := mustJSON(r); !strings.Contains(got, "s00, s01,") || !strings.Contains(got, "s19 and 5 more (from") || strings.Contains(got, "s20") {
		t.Errorf("truncation: %s", got)
	}
	// An empty root says so.
	_, reg = openFamily(t, map[string]string{"SYN_SCHEMAS_DIR": t.TempDir()})
	r = call(t, reg, "validate_asset", map[string]any{"asset": 1, "schema": "ghost"})
	if got := mustJSON(r); !strings.Contains(got, "unknown schema: ghost; the catalog has no schemas (from /") {
		t.Errorf("empty: %s", got)
	}
	// populate_backend names the catalog too when it has no asset schema.
	_, reg = openFamily(t, map[string]string{"SYN_SCHEMAS_DIR": dir, "SYN_BACKEND_URL": "http://127.0.0.1:1"})
	r = call(t, reg, "populate_backend", map[string]any{"asset": map[string]any{}})
	if got := mustJSON(r); !strings.Contains(got, "unknown schema: synesthetic-asset; available: s00") {
		t.Errorf("populate_backend: %s", got)
	}
}

func TestValidateStandaloneEmbedded(t *testing.T) {
	none := func(string) string { return "" }
	raw, _ := fs.ReadFile(embedded, "synesthetic/examples/Shader_Example.json")
	res, err := ValidateStandalone(raw, "", none)
	if err != nil || !res.Valid || mustJSON(res.Result) != `{"ok":true}` {
		t.Fatalf("%+v %v", res, err)
	}
	res, err = ValidateStandalone(raw, "ghost", none)
	if err != nil || res.Valid || !strings.Contains(mustJSON(res.Result), "embedded synesthetic-schemas 0.7.3") {
		t.Fatalf("%+v %v", res, err)
	}
}
