package schemas

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/tool"
)

// The corpora the tests read are in the repository, so a fresh clone runs
// every test: the synesthetic schemas and examples are the embedded
// catalog's own copy (synesthetic/, its SOURCE says which release), the
// JSON-Schema-Test-Suite is in testdata/ (testdata/README.md says where it
// came from). A missing one is a failure, never a skip.
const (
	synestheticData = "synesthetic"
	suiteData       = "testdata/json-schema-test-suite"
)

// repoData returns dir (relative to this package) as an absolute path, so
// a test that changes directory can still use it, and fails the test when
// it is not there.
func repoData(t testing.TB, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		t.Fatalf("the repository's test data %s is missing: %v", abs, err)
	}
	return abs
}

// openFamily opens the family on the given roots through the real registry,
// so calls go through argument validation as clients' do.
func openFamily(t testing.TB, env map[string]string) (*Family, *tool.Registry) {
	t.Helper()
	fam, err := Open(tool.Env{Getenv: func(k string) string { return env[k] }, Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry("test")
	for _, tl := range fam.Tools() {
		if err := reg.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	return fam.(*Family), reg
}

func call(t testing.TB, reg *tool.Registry, name string, args any) map[string]any {
	t.Helper()
	e, ok := reg.Lookup(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	raw, _ := json.Marshal(args)
	checked, bad := e.CheckArgs(raw)
	if bad != nil {
		return map[string]any{"tool_error": bad.Object()}
	}
	v, err := e.Handler(context.Background(), tool.NewCall(name, checked, nil, tool.Client{}, nil))
	if err != nil {
		if te, ok := tool.AsError(err); ok {
			return map[string]any{"tool_error": te.Object()}
		}
		t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(v)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

func corpusEnv(t testing.TB) map[string]string {
	root := repoData(t, synestheticData)
	return map[string]string{"SYN_SCHEMAS_DIR": filepath.Join(root, "jsonschema"), "SYN_EXAMPLES_DIR": filepath.Join(root, "examples")}
}

func TestCorpusExamplesLoadAndValidate(t *testing.T) {
	_, reg := openFamily(t, corpusEnv(t))
	list := call(t, reg, "list_examples", map[string]any{})
	examples := list["examples"].([]any)
	if len(examples) != 15 {
		t.Fatalf("%d examples", len(examples))
	}
	for _, e := range examples {
		p := e.(map[string]any)["path"].(string)
		got := call(t, reg, "get_example", map[string]any{"path": p})
		if got["ok"] != true || got["validated"] != true || got["schema"] == "" || got["example"] == nil {
			t.Errorf("%s: %v", p, got["errors"])
		}
		// Submodule examples validate as nested assets too where they are assets.
		if strings.HasPrefix(p, "SynestheticAsset") {
			var doc any
			raw, _ := os.ReadFile(filepath.Join(corpusEnv(t)["SYN_EXAMPLES_DIR"], p))
			json.Unmarshal(raw, &doc)
			if r := call(t, reg, "validate_asset", map[string]any{"asset": doc, "schema": AliasNested}); r["ok"] != true {
				t.Errorf("%s as nested asset: %v", p, r)
			}
		}
	}
}

func TestListSchemasSortedWithVersions(t *testing.T) {
	_, reg := openFamily(t, corpusEnv(t))
	got := call(t, reg, "list_schemas", map[string]any{})
	schemas := got["schemas"].([]any)
	if len(schemas) != 9 {
		t.Fatalf("%d schemas", len(schemas))
	}
	prev := ""
	for _, s := range schemas {
		m := s.(map[string]any)
		key := m["name"].(string) + "\x00" + m["version"].(string) + "\x00" + m["path"].(string)
		if key < prev || m["version"] != "0.7.3" {
			t.Fatalf("order or version: %v", schemas)
		}
		prev = key
	}
	if r := call(t, reg, "get_schema", map[string]any{"name": "tone"}); r["ok"] != true || r["version"] != "0.7.3" || r["schema"].(map[string]any)["$id"] == nil {
		t.Fatalf("get_schema: %v", r)
	}
	if r := call(t, reg, "get_schema", map[string]any{"name": "nope"}); r["ok"] != false || r["reason"] != "not_found" {
		t.Fatalf("not found: %v", r)
	}
}
