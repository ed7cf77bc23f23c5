package schemas

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// smallRoot writes a schema root of our own: an asset schema that refers to a
// part schema by $id.
func smallRoot(t *testing.T) (string, string) {
	t.Helper()
	root := t.TempDir()
	schemas, examples := filepath.Join(root, "jsonschema"), filepath.Join(root, "examples")
	os.MkdirAll(schemas, 0o755)
	os.MkdirAll(examples, 0o755)
	os.WriteFile(filepath.Join(schemas, "part.schema.json"), []byte(`{"$id":"https://ex.test/2.1.0/part.schema.json","type":"object","properties":{"n":{"type":"number"}},"required":["n"],"additionalProperties":false}`), 0o644)
	os.WriteFile(filepath.Join(schemas, "synesthetic-asset.schema.json"), []byte(`{"$id":"https://ex.test/2.1.0/synesthetic-asset.schema.json","type":"object","additionalProperties":false,
		"properties":{"name":{"type":"string"},"parts":{"type":"array","items":{"$ref":"https://ex.test/2.1.0/part.schema.json"}},"a/b":{"type":"integer"}},"required":["name"]}`), 0o644)
	os.WriteFile(filepath.Join(examples, "Part_Example.json"), []byte(`{"$schema":"jsonschema/part.schema.json","n":1}`), 0o644)
	os.WriteFile(filepath.Join(examples, "Bad_Example.json"), []byte(`{"$schema":"jsonschema/part.schema.json","n":"x"}`), 0o644)
	return schemas, examples
}

func smallFamily(t *testing.T, extra ...string) (*Family, func(string, any) map[string]any) {
	s, e := smallRoot(t)
	env := map[string]string{"SYN_SCHEMAS_DIR": s, "SYN_EXAMPLES_DIR": e}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	fam, reg := openFamily(t, env)
	return fam, func(name string, args any) map[string]any { return call(t, reg, name, args) }
}

func TestValidationErrorsSortedWithPointers(t *testing.T) {
	_, c := smallFamily(t)
	got := c("validate_asset", map[string]any{"schema": "synesthetic-asset", "asset": map[string]any{
		"parts": []any{map[string]any{"n": "x"}, map[string]any{}}, "a/b": 1.5, "extra": true}})
	b, _ := json.Marshal(got)
	want := `{"errors":[{"msg":"additional properties 'extra' not allowed","path":""},{"msg":"missing property 'name'","path":""},` +
		`{"msg":"got number, want integer","path":"/a~1b"},{"msg":"got string, want number","path":"/parts/0/n"},{"msg":"missing property 'n'","path":"/parts/1"}],"ok":false,"reason":"validation_failed"}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	if r := c("validate_asset", map[string]any{"schema": "synesthetic-asset", "asset": map[string]any{"name": "x"}}); r["ok"] != true || r["errors"] != nil {
		t.Fatalf("valid: %v", r)
	}
}

// TestHugeExponent: a number math/big cannot parse is a violation at its
// path (the full validator would dereference a nil *big.Rat), and the
// number is still checked where it can be: 1E1000001 is a number.
func TestHugeExponent(t *testing.T) {
	_, c := smallFamily(t)
	for _, asset := range []string{`{"n":1E1000001}`, `{"n":-1e-1000001}`} {
		r := c("validate_asset", map[string]any{"schema": "part", "asset": json.RawMessage(asset)})
		if r["ok"] != true {
			t.Errorf("%s: %v (a number with no bound to compare is valid)", asset, r)
		}
	}
	r := c("validate_asset", map[string]any{"schema": "part", "asset": json.RawMessage(`{"n":1E1000001,"x":1}`)})
	if r["ok"] != false || !strings.Contains(mustJSON(r), "additional properties") {
		t.Errorf("invalid for another reason: %v", r)
	}
	// Against a bound: a clear violation at the number, not -32603.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "gain.schema.json"), []byte(`{"type":"object","properties":{"gain":{"type":"number","maximum":1},"list":{"type":"array","items":{"type":"number","minimum":0}}}}`), 0o644)
	_, reg := openFamily(t, map[string]string{"SYN_SCHEMAS_DIR": dir})
	for asset, path := range map[string]string{`{"gain":1E1000001}`: "/gain", `{"gain":2,"list":[1,-1e-1000001]}`: "/list/1"} {
		r := call(t, reg, "validate_asset", map[string]any{"schema": "gain", "asset": json.RawMessage(asset)})
		if b := mustJSON(r); r["ok"] != false || !strings.Contains(b, `"path":"`+path+`"`) || !strings.Contains(b, "out of range") {
			t.Errorf("%s: %s", asset, b)
		}
	}
}

// TestManyDigits: a number with more digits than validation converts
// (docs/decisions/0012-validator-number-guard.md) is a violation at its
// path where the schema compares it, answered without converting it; one
// nothing compares is a number like any other.
func TestManyDigits(t *testing.T) {
	million := strings.Repeat("7", 1_000_000)
	_, c := smallFamily(t)
	if r := c("validate_asset", map[string]any{"schema": "part", "asset": json.RawMessage(`{"n":` + million + `}`)}); r["ok"] != true {
		t.Errorf("a long number with no bound to compare: %.300s", mustJSON(r))
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "gain.schema.json"), []byte(`{"type":"object","properties":{"gain":{"type":"number","maximum":1},"list":{"type":"array","items":{"type":"integer"}}}}`), 0o644)
	_, reg := openFamily(t, map[string]string{"SYN_SCHEMAS_DIR": dir})
	for asset, path := range map[string]string{
		`{"gain":` + million + `}`:                                  "/gain",
		`{"gain":1.` + strings.Repeat("0", 999_990) + `}`:           "/gain",
		`{"gain":0,"list":[1,2.` + million + `e1000]}`:              "/list/1",
		`{"gain":-` + strings.Repeat("9", 1001) + `,"list":[true]}`: "/gain",
	} {
		r := call(t, reg, "validate_asset", map[string]any{"schema": "gain", "asset": json.RawMessage(asset)})
		if b := mustJSON(r); r["ok"] != false || !strings.Contains(b, `"path":"`+path+`"`) || !strings.Contains(b, "digits") || len(b) > 1024 {
			t.Errorf("%.40s…: %.300s", asset, b)
		}
	}
}

func TestMissingOrUnknownSchema(t *testing.T) {
	_, c := smallFamily(t)
	for _, args := range []map[string]any{{"asset": 1}, {"asset": 1, "schema": ""}} {
		r := c("validate_asset", args)
		if r["ok"] != false || r["reason"] != "validation_failed" || !strings.Contains(mustJSON(r), "schema is required") {
			t.Fatalf("%v: %v", args, r)
		}
	}
	if r := c("validate_asset", map[string]any{"asset": 1, "schema": "ghost"}); !strings.Contains(mustJSON(r), "unknown schema: ghost") {
		t.Fatalf("%v", r)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestNestedAliasIgnoresSchemaRef(t *testing.T) {
	_, c := smallFamily(t)
	asset := map[string]any{"name": "x", "$schemaRef": "whatever://not/resolved"}
	if r := c("validate_asset", map[string]any{"asset": asset, "schema": AliasNested}); r["ok"] != true {
		t.Fatalf("alias: %v", r)
	}
	if r := c("validate_asset", map[string]any{"asset": asset, "schema": "synesthetic-asset"}); r["ok"] != false {
		t.Fatalf("canonical must still see $schemaRef as content: %v", r)
	}
}

func TestValidateAliasAndBatchCap(t *testing.T) {
	_, c := smallFamily(t, "MCP_MAX_BATCH", "3")
	a := c("validate_asset", map[string]any{"asset": map[string]any{}, "schema": "part"})
	b := c("validate", map[string]any{"asset": map[string]any{}, "schema": "part"})
	if mustJSON(a) != mustJSON(b) {
		t.Fatalf("alias differs: %v vs %v", a, b)
	}
	r := c("validate_many", map[string]any{"schema": "part", "assets": []any{map[string]any{"n": 1}, map[string]any{"n": "x"}, 7}})
	if mustJSON(r) != `{"ok":true,"results":[{"ok":true},{"errors":[{"msg":"got string, want number","path":"/n"}],"ok":false},{"errors":[{"msg":"got number, want object","path":""}],"ok":false}]}` {
		t.Fatalf("validate_many: %s", mustJSON(r))
	}
	r = c("validate_many", map[string]any{"schema": "part", "assets": []any{1, 2, 3, 4}})
	if r["ok"] != false || r["reason"] != "unsupported" {
		t.Fatalf("over the cap: %v", r)
	}
}

func TestGetExampleTraversalTable(t *testing.T) {
	fam, c := smallFamily(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.json"), []byte(`{"n":1}`), 0o644)
	os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(fam.Catalog().ExamplesDir, "link.json"))
	for _, p := range []string{"../jsonschema/part.schema.json", "/etc/passwd", "a/../../x.json", "Part_Example.json\x00.txt",
		`..\Part_Example.json`, "..%2fjsonschema%2fpart.schema.json", "%2e%2e/x.json", "link.json"} {
		r := c("get_example", map[string]any{"path": p})
		if r["ok"] != false || r["example"] != nil {
			t.Errorf("%q was served: %v", p, r)
		}
	}
	if r := c("get_example", map[string]any{"path": "Part_Example.json"}); r["ok"] != true || r["schema"] != "part" || r["validated"] != true {
		t.Fatalf("good path: %v", r)
	}
	if r := c("get_example", map[string]any{"path": "Bad_Example.json"}); r["reason"] != "validation_failed" {
		t.Fatalf("invalid example: %v", r)
	}
	if r := c("get_example", map[string]any{"path": "missing.json"}); r["reason"] != "not_found" {
		t.Fatalf("missing: %v", r)
	}
	if r := c("list_examples", map[string]any{"component": "part"}); len(r["examples"].([]any)) != 2 {
		t.Fatalf("by component: %v", r)
	}

	// Special files, a link to one and a directory leading out: refused at
	// once, saying why (opening a FIFO for reading waits for a writer).
	dir := fam.Catalog().ExamplesDir
	specials := specialJSON(t, filepath.Join(dir, "special"))
	os.Symlink("special/fifo.json", filepath.Join(dir, "link-fifo.json"))
	os.Symlink(outside, filepath.Join(dir, "up"))
	refusals := map[string]string{
		"link-fifo.json":  "path refused: link-fifo.json is a FIFO, not a regular file",
		"special":         "path refused: special is a directory, not a regular file",
		"up/secret.json":  "path refused: the path leaves its root",
		"special/../up/x": "path refused: the path leaves its root",
	}
	for _, sp := range specials {
		refusals["special/"+sp.Name] = "path refused: special/" + sp.Name + " is a " + sp.Kind + ", not a regular file"
	}
	for p, want := range refusals {
		var r map[string]any
		safefiletest.Prompt(t, "get_example "+p, func() { r = c("get_example", map[string]any{"path": p}) })
		if r["ok"] != false || r["example"] != nil || !strings.Contains(mustJSON(r), want) {
			t.Errorf("get_example %q: %v; want %q", p, r, want)
		}
	}
	if r := c("list_examples", map[string]any{}); len(r["examples"].([]any)) != 2 {
		t.Fatalf("special files listed as examples: %v", r)
	}
}

// specialJSON makes a FIFO, a socket and (as root) a device in dir, named
// <kind>.json as a schema or an example would be.
func specialJSON(t *testing.T, dir string) []safefiletest.Special {
	t.Helper()
	specials := safefiletest.Make(t, dir)
	for i, sp := range specials {
		if err := os.Rename(filepath.Join(dir, sp.Name), filepath.Join(dir, sp.Name+".json")); err != nil {
			t.Fatal(err)
		}
		specials[i].Name += ".json"
	}
	return specials
}

// TestSpecialFilesInTheSchemaRoots: a FIFO, a socket or a device in the
// schema root is not a schema, a $ref to one fails the load at once naming
// it, and resources/read of one answers at once.
func TestSpecialFilesInTheSchemaRoots(t *testing.T) {
	fam, c := smallFamily(t)
	schemasDir, examplesDir := fam.Catalog().SchemasDir, fam.Catalog().ExamplesDir
	specials := specialJSON(t, filepath.Join(schemasDir, "special"))
	exampleSpecials := specialJSON(t, filepath.Join(examplesDir, "special"))
	safefiletest.Prompt(t, "a reload", func() {
		if err := fam.Reload(); err != nil {
			t.Errorf("reload with special files in the roots: %v", err)
		}
	})
	if r := c("list_schemas", map[string]any{}); len(r["schemas"].([]any)) != 2 {
		t.Fatalf("special files listed as schemas: %v", r)
	}
	// resources/read is the schema family's ReadResource: it answers
	// before any call, so a blocked read used to stop a connection dead.
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "x.json"), []byte(`{"n":1}`), 0o644)
	os.Symlink(outside, filepath.Join(examplesDir, "up"))
	uris := map[string]string{"hearth://examples/up/x.json": "the path leaves its root"}
	for _, sp := range specials {
		uris["hearth://schemas/special/"+sp.Name] = "no such resource"
		uris["hearth://schemas/"+strings.TrimSuffix(sp.Name, ".json")] = "no such resource"
	}
	for _, sp := range exampleSpecials {
		uris["hearth://examples/special/"+sp.Name] = "special/" + sp.Name + " is a " + sp.Kind + ", not a regular file"
	}
	for uri, want := range uris {
		var err error
		safefiletest.Prompt(t, "resources/read "+uri, func() { _, _, err = fam.ReadResource(uri) })
		if !errors.Is(err, tool.ErrNoResource) || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadResource(%s): %v; want %q", uri, err, want)
		}
	}
	for _, sp := range specials {
		os.WriteFile(filepath.Join(schemasDir, "uses.schema.json"), []byte(`{"$ref":"special/`+sp.Name+`"}`), 0o644)
		var cat *Catalog
		var err error
		safefiletest.Prompt(t, "a load with a $ref to "+sp.Name, func() { cat, err = Load(schemasDir, "", Options{}) })
		if err != nil {
			t.Fatal(err)
		}
		// The schema with the $ref is left out, named with the file it
		// refers to; the others serve.
		want := "special/" + sp.Name + " is a " + sp.Kind + ", not a regular file"
		if p := cat.Problems(); len(p) != 1 || p[0].Path != "uses.schema.json" || !strings.Contains(p[0].Error, want) {
			t.Errorf("$ref to %s: problems %v; want %q", sp.Name, p, want)
		}
		if len(cat.Schemas()) != 2 {
			t.Errorf("$ref to %s: %d schemas serve, want the 2 good ones", sp.Name, len(cat.Schemas()))
		}
	}
	os.Remove(filepath.Join(schemasDir, "uses.schema.json"))
	if text, _, err := fam.ReadResource("hearth://examples/Part_Example.json"); err != nil || !strings.Contains(text, `"n":1`) {
		t.Fatalf("a regular example: %q %v", text, err)
	}
}

func TestRemoteRefNeverFetched(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "remote.schema.json"), []byte(`{"$ref":"`+srv.URL+`/s.json"}`), 0o644)
	if cat, err := Load(root, "", Options{}); err != nil || len(cat.Problems()) != 1 || !strings.Contains(cat.Problems()[0].Error, "no network") {
		t.Fatalf("want a refusal, got %v", problemsOf(cat, err))
	}
	if hits.Load() != 0 {
		t.Fatal("the schema was fetched over the network")
	}
	os.WriteFile(filepath.Join(root, "remote.schema.json"), []byte(`{"$ref":"file:///etc/hosts"}`), 0o644)
	if cat, err := Load(root, "", Options{}); err != nil || len(cat.Schemas()) != 0 || len(cat.Problems()) != 1 {
		t.Fatalf("a file outside the root was loaded: %v", problemsOf(cat, err))
	}
}

// problemsOf is a load's outcome for a failure message.
func problemsOf(cat *Catalog, err error) any {
	if err != nil {
		return err
	}
	return cat.Problems()
}

// TestReloadKeepsOldCatalogOnFailure: a schema root that cannot be read at
// all leaves the previous catalog serving; one broken file among good ones
// is left out and reported, and the rest of the new catalog serves.
func TestReloadKeepsOldCatalogOnFailure(t *testing.T) {
	fam, c := smallFamily(t)
	dir := fam.Catalog().SchemasDir
	os.WriteFile(filepath.Join(dir, "broken.schema.json"), []byte(`{"type":`), 0o644)
	os.WriteFile(filepath.Join(dir, "extra.schema.json"), []byte(`{"type":"string"}`), 0o644)
	if err := fam.Reload(); err != nil {
		t.Fatalf("reload with one broken file: %v", err)
	}
	if r := c("list_schemas", map[string]any{}); len(r["schemas"].([]any)) != 3 {
		t.Fatalf("the good schemas do not all serve: %v", r)
	}
	if p := fam.Problems(); len(p) != 1 || !strings.Contains(p[0], "schema broken.schema.json did not load: not JSON") {
		t.Fatalf("problems: %q", p)
	}
	if r := c("validate_asset", map[string]any{"asset": 1, "schema": "broken"}); !strings.Contains(mustJSON(r), `schema \"broken\" did not load: broken.schema.json: not JSON`) {
		t.Errorf("validate_asset against the broken schema: %s", mustJSON(r))
	}
	if r := c("get_schema", map[string]any{"name": "broken"}); r["reason"] != "not_found" {
		t.Errorf("get_schema of the broken schema: %v", r)
	}

	// The whole root gone: the previous catalog serves on.
	os.Rename(dir, dir+".away")
	if err := fam.Reload(); err == nil || !strings.Contains(err.Error(), "does not exist: create it, or remove schemas_dir") {
		t.Fatalf("reload of a missing root: %v", err)
	}
	if r := c("list_schemas", map[string]any{}); len(r["schemas"].([]any)) != 3 {
		t.Fatalf("old catalog not serving: %v", r)
	}
	os.Rename(dir+".away", dir)
	os.WriteFile(filepath.Join(dir, "broken.schema.json"), []byte(`{"type":"string"}`), 0o644)
	if err := fam.Reload(); err != nil {
		t.Fatal(err)
	}
	if r := c("list_schemas", map[string]any{}); len(r["schemas"].([]any)) != 4 || len(fam.Problems()) != 0 {
		t.Fatalf("new catalog: %v, problems %q", r, fam.Problems())
	}
}

func TestDiffAssetsTool(t *testing.T) {
	_, c := smallFamily(t)
	r := c("diff_assets", map[string]any{"base": map[string]any{"a": 1, "b": []any{1}, "c": nil}, "new": map[string]any{"a": 2, "b": []any{1, 2}, "d": nil}})
	want := `{"ok":true,"patch":[{"op":"replace","path":"/a","value":2},{"op":"replace","path":"/b","value":[1,2]},{"op":"remove","path":"/c"},{"op":"add","path":"/d","value":null}]}`
	if mustJSON(r) != want {
		t.Fatalf("got  %s\nwant %s", mustJSON(r), want)
	}
	if r := c("diff_assets", map[string]any{"base": 1}); r["tool_error"] == nil {
		t.Fatalf("missing new: %v", r)
	}
}

// TestDiffAssetsFromTheFrame calls diff_assets as the daemon does, on the
// arguments as the frame's decode left them: the patch's values are the
// client's own text, compacted (escapes and number literals as sent).
func TestDiffAssetsFromTheFrame(t *testing.T) {
	s, e := smallRoot(t)
	_, reg := openFamily(t, map[string]string{"SYN_SCHEMAS_DIR": s, "SYN_EXAMPLES_DIR": e})
	entry, _ := reg.Lookup("diff_assets")
	doc, err := jsonval.ParseRaw([]byte(`{"new": {"a": 1.50, "b": {"s": "\u00e9 <"}, "b": [ 1 ]}, "base": {"a":1.5,"c":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	args, bad := entry.CheckDoc(doc)
	if bad != nil {
		t.Fatal(bad)
	}
	res, err := entry.Handler(context.Background(), tool.NewCall("diff_assets", args.Raw, args.Doc, tool.Client{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ok":true,"patch":[{"op":"add","path":"/b","value":[1]},{"op":"remove","path":"/c"}]}`
	if got := mustJSON(res); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	doc, _ = jsonval.ParseRaw([]byte(`{"base": {"a": 1}, "new": {"a": {"s": "\u00e9 <", "n": 1.50}}}`))
	args, _ = entry.CheckDoc(doc)
	res, _ = entry.Handler(context.Background(), tool.NewCall("diff_assets", args.Raw, args.Doc, tool.Client{}, nil))
	want = `{"ok":true,"patch":[{"op":"replace","path":"/a","value":{"s":"\u00e9 \u003c","n":1.50}}]}`
	if got := mustJSON(res); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestPopulateBackend(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.WriteHeader(201)
		w.Write([]byte(`{"id":"a-1"}`))
	}))
	defer srv.Close()
	_, off := smallFamily(t)
	if r := off("populate_backend", map[string]any{"asset": map[string]any{"name": "x"}}); r["reason"] != "unsupported" {
		t.Fatalf("no backend: %v", r)
	}
	_, c := smallFamily(t, "SYN_BACKEND_URL", srv.URL)
	if r := c("populate_backend", map[string]any{"asset": map[string]any{"name": 5}}); r["reason"] != "validation_failed" || posts.Load() != 0 {
		t.Fatalf("invalid asset: %v (posts %d)", r, posts.Load())
	}
	if r := c("populate_backend", map[string]any{"asset": map[string]any{"name": "x"}, "validate_first": false}); r["reason"] != "validation_failed" || posts.Load() != 0 {
		t.Fatalf("validate_first=false must be refused: %v", r)
	}
	if r := c("populate_backend", map[string]any{"asset": map[string]any{"name": "x"}}); r["ok"] != true || r["asset_id"] != "a-1" || posts.Load() != 1 {
		t.Fatalf("good asset: %v", r)
	}
}
