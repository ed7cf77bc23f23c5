package schemas

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// copyTree copies the regular files under src into dst.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSuiteRemotesAsOneCatalog points the schema root at a copy of the
// JSON-Schema-Test-Suite's remotes/ tree, as a user with a real tree would:
// it holds one name in many folders (integer.json, folderInteger.json in
// baseUriChange/, baseUriChangeFolder/, ...) and schemas of older drafts.
// Each required Draft 2020-12 group's schema is written into that root as
// case.json, the catalog reloads, and every test goes through
// validate_asset. The remotes are found by the URL they are published
// under (schemas_base_url), from local files only.
func TestSuiteRemotesAsOneCatalog(t *testing.T) {
	suite := repoData(t, suiteData)
	root := t.TempDir()
	copyTree(t, filepath.Join(suite, "remotes"), root)
	fam, reg := openFamily(t, map[string]string{"SYN_SCHEMAS_DIR": root, "SYN_SCHEMAS_BASE_URL": "http://localhost:1234/"})

	// The tree itself loads, shared names and all.
	cat := fam.Catalog()
	if cat == nil {
		t.Fatalf("the remotes tree did not load: %v", fam.Problems())
	}
	if n := len(cat.byName["integer"]); n < 2 {
		t.Fatalf("%d schemas named integer; the tree has several", n)
	}
	for _, p := range cat.Problems() {
		t.Logf("left out: %s: %s", p.Path, p.Error)
	}

	passed, total := 0, 0
	for _, g := range suiteCases(t, suite) {
		if err := os.WriteFile(filepath.Join(root, "case.json"), g.Schema, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := fam.Reload(); err != nil {
			t.Fatalf("%s / %s: reload: %v", g.file, g.Description, err)
		}
		for _, tc := range g.Tests {
			total++
			r := call(t, reg, "validate_asset", map[string]any{"asset": tc.Data, "schema": "case"})
			if (r["ok"] == true) == tc.Valid {
				passed++
			} else {
				t.Errorf("%s / %s / %s: want valid=%v, got %s", g.file, g.Description, tc.Description, tc.Valid, mustJSON(r))
			}
		}
	}
	t.Logf("Draft 2020-12 through validate_asset, remotes as one catalog: %d/%d", passed, total)
	if total != 1299 {
		t.Errorf("ran %d tests; the suite has 1299 required ones", total)
	}
}

// versionedRoot writes a tree where one name lives in two version folders
// and a third folder without a version.
func versionedRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for rel, body := range map[string]string{
		"v1/asset.json":          `{"type":"object","required":["a"]}`,
		"v2/asset.json":          `{"type":"object","required":["b"]}`,
		"other/asset.json":       `{"type":"object","required":["c"]}`,
		"unique.schema.json":     `{"type":"string"}`,
		"v2/uses-v1-asset.json":  `{"$ref":"../v1/asset.json"}`,
		"nested/deep/thing.json": `{"type":"integer"}`,
	} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestSharedNameResolution: list_schemas lists every schema of a shared
// name; a bare shared name is refused with its candidates; name@version and
// the path choose one; a unique name still works alone.
func TestSharedNameResolution(t *testing.T) {
	root := versionedRoot(t)
	fam, reg := openFamily(t, map[string]string{"SYN_SCHEMAS_DIR": root})
	c := func(name string, args any) map[string]any { return call(t, reg, name, args) }

	list := c("list_schemas", map[string]any{})["schemas"].([]any)
	var got []string
	for _, s := range list {
		m := s.(map[string]any)
		got = append(got, m["name"].(string)+"|"+m["version"].(string)+"|"+m["path"].(string))
	}
	want := "asset||other/asset.json asset|v1|v1/asset.json asset|v2|v2/asset.json thing||nested/deep/thing.json unique||unique.schema.json uses-v1-asset|v2|v2/uses-v1-asset.json"
	if strings.Join(got, " ") != want {
		t.Fatalf("list_schemas:\n got %s\nwant %s", strings.Join(got, " "), want)
	}

	// The bare shared name: refused, every candidate named.
	r := c("validate_asset", map[string]any{"asset": map[string]any{}, "schema": "asset"})
	msg := mustJSON(r)
	for _, w := range []string{`schema name \"asset\" is ambiguous: 3 schemas have it`, "other/asset.json", "asset@v1 (v1/asset.json)", "asset@v2 (v2/asset.json)", "name one by its path, or as name@version"} {
		if !strings.Contains(msg, w) {
			t.Errorf("ambiguous validate_asset: %s; want %q", msg, w)
		}
	}
	if r := c("get_schema", map[string]any{"name": "asset"}); r["reason"] != "validation_failed" || !strings.Contains(mustJSON(r), "ambiguous") {
		t.Errorf("ambiguous get_schema: %v", r)
	}
	if r := c("validate_many", map[string]any{"assets": []any{map[string]any{}}, "schema": "asset"}); !strings.Contains(mustJSON(r), "ambiguous") {
		t.Errorf("ambiguous validate_many: %v", r)
	}

	// name@version and the path each choose one.
	for _, tc := range []struct {
		ref, required string
	}{{"asset@v1", "a"}, {"asset@v2", "b"}, {"v1/asset.json", "a"}, {"other/asset.json", "c"}, {"v2/uses-v1-asset.json", "a"}, {"uses-v1-asset", "a"}} {
		if r := c("validate_asset", map[string]any{"asset": map[string]any{tc.required: 1}, "schema": tc.ref}); r["ok"] != true {
			t.Errorf("%s with %q: %v", tc.ref, tc.required, r)
		}
		if r := c("validate_asset", map[string]any{"asset": map[string]any{"zz": 1}, "schema": tc.ref}); r["ok"] != false || !strings.Contains(mustJSON(r), tc.required) {
			t.Errorf("%s without %q: %v", tc.ref, tc.required, r)
		}
	}
	if r := c("get_schema", map[string]any{"name": "asset@v2"}); r["ok"] != true || r["path"] != "v2/asset.json" || r["version"] != "v2" {
		t.Errorf("get_schema asset@v2: %v", r)
	}
	for _, ref := range []string{"asset@v3", "v3/asset.json", "asset@", "@v1"} {
		if r := c("get_schema", map[string]any{"name": ref}); r["reason"] != "not_found" {
			t.Errorf("get_schema %q: %v", ref, r)
		}
		if r := c("validate_asset", map[string]any{"asset": 1, "schema": ref}); !strings.Contains(mustJSON(r), "unknown schema") {
			t.Errorf("validate_asset %q: %v", ref, mustJSON(r))
		}
	}
	// A unique name alone; an unknown name lists the shared ones by what
	// names each alone.
	if r := c("validate_asset", map[string]any{"asset": "s", "schema": "unique"}); r["ok"] != true {
		t.Errorf("unique: %v", r)
	}
	r = c("validate_asset", map[string]any{"asset": 1, "schema": "ghost"})
	if msg := mustJSON(r); !strings.Contains(msg, "available: other/asset.json, asset@v1, asset@v2, thing, unique, uses-v1-asset (from") {
		t.Errorf("unknown: %s", msg)
	}

	// Resources: one URI each, by what names it alone, and each reads back.
	uris := map[string]bool{}
	for _, res := range fam.Resources() {
		uris[res.URI] = true
		if _, _, err := fam.ReadResource(res.URI); err != nil {
			t.Errorf("%s: %v", res.URI, err)
		}
	}
	for _, u := range []string{"hearth://schemas/asset@v1", "hearth://schemas/asset@v2", "hearth://schemas/other/asset.json", "hearth://schemas/unique"} {
		if !uris[u] {
			t.Errorf("no resource %s among %v", u, uris)
		}
	}
	if _, _, err := fam.ReadResource("hearth://schemas/asset"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("resources/read of a shared name: %v", err)
	}
}

// TestSharedNameStandalone: validating without a daemon (hearthd validate)
// takes the same references.
func TestSharedNameStandalone(t *testing.T) {
	root := versionedRoot(t)
	env := map[string]string{"SYN_SCHEMAS_DIR": root, "SYN_EXAMPLES_DIR": ""}
	for _, tc := range []struct {
		schema string
		valid  bool
		out    string
	}{{"asset", false, "ambiguous"}, {"asset@v2", true, `{"ok":true}`}, {"v2/asset.json", true, `{"ok":true}`}, {"asset@v1", false, "a"}} {
		res, err := ValidateStandalone([]byte(`{"b":1}`), tc.schema, func(k string) string { return env[k] })
		if err != nil || res.Valid != tc.valid || !strings.Contains(mustJSON(res.Result), tc.out) {
			t.Errorf("schema %s: %+v %v", tc.schema, res, err)
		}
	}
}

// TestExamplesRootMissing: an examples root that does not exist is the
// example tools' error and a problem in the status; the schemas serve.
func TestExamplesRootMissing(t *testing.T) {
	s, _ := smallRoot(t)
	missing := filepath.Join(t.TempDir(), "no-such-examples")
	fam, reg := openFamily(t, map[string]string{"SYN_SCHEMAS_DIR": s, "SYN_EXAMPLES_DIR": missing})
	if r := call(t, reg, "validate_asset", map[string]any{"asset": map[string]any{"n": 1}, "schema": "part"}); r["ok"] != true {
		t.Fatalf("schemas do not serve: %v", r)
	}
	if r := call(t, reg, "list_schemas", map[string]any{}); len(r["schemas"].([]any)) != 2 {
		t.Fatalf("list_schemas: %v", r)
	}
	for _, tc := range []struct {
		name string
		args any
	}{{"list_examples", map[string]any{}}, {"get_example", map[string]any{"path": "Part_Example.json"}}} {
		r := call(t, reg, tc.name, tc.args)
		if msg := mustJSON(r); !strings.Contains(msg, "CAPABILITY_MISSING") || !strings.Contains(msg, "the examples did not load (the schemas serve)") || !strings.Contains(msg, missing) {
			t.Errorf("%s: %s", tc.name, msg)
		}
	}
	if p := fam.Problems(); len(p) != 1 || !strings.Contains(p[0], "the examples did not load") || !strings.Contains(p[0], missing) {
		t.Errorf("problems: %q", p)
	}
	// Created later, a SIGHUP brings the examples in.
	os.MkdirAll(missing, 0o755)
	os.WriteFile(filepath.Join(missing, "Part_Example.json"), []byte(`{"n":1}`), 0o644)
	if err := fam.Reload(); err != nil {
		t.Fatal(err)
	}
	if r := call(t, reg, "get_example", map[string]any{"path": "Part_Example.json"}); r["ok"] != true || r["validated"] != true {
		t.Errorf("after reload: %v", r)
	}
	if p := fam.Problems(); len(p) != 0 {
		t.Errorf("problems after reload: %q", p)
	}
}

// TestBadSchemaFilesAmongGood is the table of schema files that do not
// load: each is named with why, and the good ones serve beside it.
func TestBadSchemaFilesAmongGood(t *testing.T) {
	for _, tc := range []struct {
		name, file, body, want string
	}{
		{"not JSON", "bad.json", `{"type":`, "not JSON"},
		{"empty file", "bad.json", ``, "not JSON"},
		{"two documents", "bad.json", `{} {}`, "not JSON"},
		{"bad keyword value", "bad.json", `{"type":"strung"}`, "does not compile"},
		{"minimum a string", "bad.json", `{"minimum":"1"}`, "does not compile"},
		{"$ref to a missing file", "bad.json", `{"$ref":"missing.json"}`, "does not compile"},
		{"$ref leaving the root", "bad.json", `{"$ref":"../outside.json"}`, "does not compile"},
		{"$ref over the network", "bad.json", `{"$ref":"https://example.com/s.json"}`, "no network"},
		{"duplicate $id", "zz-dup.json", `{"$id":"https://ex.test/2.1.0/part.schema.json"}`, `has the same $id "https://ex.test/2.1.0/part.schema.json" as part.schema.json`},
		{"unreadable", "bad.json", `{}`, "cannot read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := smallRoot(t)
			p := filepath.Join(s, tc.file)
			os.WriteFile(p, []byte(tc.body), 0o644)
			if tc.name == "unreadable" {
				if os.Geteuid() == 0 {
					t.Skip("root reads a 0000 file")
				}
				os.Chmod(p, 0)
			}
			fam, reg := openFamily(t, map[string]string{"SYN_SCHEMAS_DIR": s})
			probs := fam.Problems()
			if len(probs) != 1 || !strings.Contains(probs[0], "schema "+tc.file+" did not load") || !strings.Contains(probs[0], tc.want) {
				t.Fatalf("problems %q; want %s: %s", probs, tc.file, tc.want)
			}
			if r := call(t, reg, "validate_asset", map[string]any{"asset": map[string]any{"n": 1}, "schema": "part"}); r["ok"] != true {
				t.Errorf("the good schemas do not serve: %v", r)
			}
			name := strings.TrimSuffix(tc.file, ".json")
			if r := call(t, reg, "validate_asset", map[string]any{"asset": 1, "schema": name}); !strings.Contains(mustJSON(r), "did not load: "+tc.file) {
				t.Errorf("validate_asset against %s: %s", name, mustJSON(r))
			}
		})
	}
}

// TestBadSchemasBaseURL is the table of base URLs that cannot name a
// root's files: each fails the load with the setting named, so a SIGHUP
// with one keeps the previous catalog.
func TestBadSchemasBaseURL(t *testing.T) {
	root := versionedRoot(t)
	for _, tc := range []struct{ url, want string }{
		{"schemas/", "want an absolute URL"},
		{"/schemas/", "want an absolute URL"},
		{"https:///schemas/", "want an absolute URL"},
		{"https://example.com/schemas", `ending in "/"`},
		{"https://example.com/s/?v=1/", "no query or fragment"},
		{"https://example.com/s/#/", "no query or fragment"},
		{"https://exa mple.com/", "schemas_base_url"},
		{"http://[::1/", "schemas_base_url"},
	} {
		_, err := Load(root, "", Options{BaseURL: tc.url})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "schemas_base_url") {
			t.Errorf("%q: %v; want %q", tc.url, err, tc.want)
		}
	}
	for _, good := range []string{"https://example.com/", "http://localhost:1234/", "urn:example:schemas/"} {
		if _, err := Load(root, "", Options{BaseURL: good}); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
}

// TestBaseURLResolvesInsideTheRoot: a $ref by the published URL reaches the
// root's file, with or without an $id, and never the network or a file
// outside the root.
func TestBaseURLResolvesInsideTheRoot(t *testing.T) {
	root := versionedRoot(t)
	os.WriteFile(filepath.Join(root, "by-url.json"), []byte(`{"$ref":"https://example.com/s/v2/asset.json"}`), 0o644)
	os.WriteFile(filepath.Join(root, "escape.json"), []byte(`{"$ref":"https://example.com/s/../../etc/passwd"}`), 0o644)
	cat, err := Load(root, "", Options{BaseURL: "https://example.com/s/"})
	if err != nil {
		t.Fatal(err)
	}
	ok, _, err := cat.ValidateDoc(mustParse(t, `{"b":1}`), "by-url")
	if err != nil || !ok {
		t.Fatalf("by-url: %v %v", ok, err)
	}
	if ok, _, _ := cat.ValidateDoc(mustParse(t, `{"a":1}`), "by-url"); ok {
		t.Fatal("by-url accepted what v2/asset.json refuses")
	}
	if s, err := cat.Resolve("https://example.com/s/v1/asset.json"); err != nil || s.Path != "v1/asset.json" {
		t.Fatalf("resolve by published URL: %v %v", s, err)
	}
	if p := cat.Problems(); len(p) != 1 || p[0].Path != "escape.json" {
		t.Fatalf("problems: %v", p)
	}
}

func mustParse(t testing.TB, s string) *jsonval.Doc {
	t.Helper()
	d, err := jsonval.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// FuzzResolve: any reference a client sends resolves to one schema or is a
// LookupError, never a panic; what the catalog itself calls a schema
// (RefOf) always resolves back to it.
func FuzzResolve(f *testing.F) {
	root := f.TempDir()
	for rel, body := range map[string]string{
		"v1/asset.json": `{"$id":"https://x.test/1.0/asset.json"}`, "v2/asset.json": `{}`, "other/asset.json": `{}`,
		"a@b.json": `{}`, "x.json.json": `{}`, "x.json": `{}`, "nested-synesthetic-asset.json": `{}`, "synesthetic-asset.json": `{}`,
	} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	cat, err := Load(root, "", Options{})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range cat.Schemas() {
		if got, err := cat.Resolve(cat.RefOf(s)); err != nil || got != s {
			f.Fatalf("RefOf(%s) = %q resolves to %v, %v", s.Path, cat.RefOf(s), got, err)
		}
	}
	for _, seed := range []string{"asset", "asset@v1", "asset@1.0", "@", "asset@", "@v1", "a@b", "a@b@c", "x.json", "x.json.json",
		"v2/asset.json", "https://x.test/1.0/asset.json", "nested-synesthetic-asset", "", "\x00", "../v1/asset.json"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		s, err := cat.Resolve(ref)
		switch {
		case err == nil && s == nil, err != nil && s != nil:
			t.Fatalf("Resolve(%q) = %v, %v", ref, s, err)
		case err != nil:
			var le *LookupError
			if !errors.As(err, &le) || err.Error() == "" {
				t.Fatalf("Resolve(%q): %T %v", ref, err, err)
			}
		}
	})
}
