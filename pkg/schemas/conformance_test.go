package schemas

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// TestDraft2020Conformance runs every required test of the official
// JSON-Schema-Test-Suite (tests/draft2020-12/*.json, not optional/) through
// the catalog's validation path: each group's schema is a file in a schema
// root of its own.
func TestDraft2020Conformance(t *testing.T) {
	passed, total := 0, 0
	eachSuiteGroup(t, func(g suiteGroup) {
		if g.loadErr != nil {
			total += len(g.tests)
			t.Errorf("%s / %s: schema did not load: %v", g.file, g.description, g.loadErr)
			return
		}
		for _, tc := range g.tests {
			total++
			doc, err := decode(tc.Data)
			if err != nil {
				t.Fatal(err)
			}
			r := validateDoc(g.cat, doc, "group")
			if (r["ok"] == true) == tc.Valid {
				passed++
			} else {
				t.Errorf("%s / %s / %s: want valid=%v, got %v", g.file, g.description, tc.Description, tc.Valid, r)
			}
		}
	})
	t.Logf("Draft 2020-12 conformance: %d/%d required tests pass", passed, total)
	if total != 1299 {
		t.Errorf("ran %d tests; the suite has 1299 required ones", total)
	}
}

// TestFastCheckerAgreesWithTheSuite: wherever the fast checker compiles a
// suite schema, its verdict on every test must be the suite's (the full
// validator is not consulted, so a checker that is too strict shows here
// too, not only one that is too lenient).
func TestFastCheckerAgreesWithTheSuite(t *testing.T) {
	compiled, checked := 0, 0
	eachSuiteGroup(t, func(g suiteGroup) {
		if g.loadErr != nil {
			return
		}
		s, _ := g.cat.Lookup("group")
		for i, tc := range g.tests {
			doc, err := jsonval.Parse(tc.Data)
			if err != nil {
				t.Fatal(err)
			}
			got, fast := s.sch.FastVerdict(doc)
			if !fast {
				return // the schema has no fast check
			}
			if i == 0 {
				compiled++
			}
			checked++
			if got != tc.Valid {
				t.Errorf("%s / %s / %s: fast checker says %v, suite says %v", g.file, g.description, tc.Description, got, tc.Valid)
			}
		}
	})
	t.Logf("fast checker: %d suite schemas compiled, %d tests agree", compiled, checked)
	if compiled < 200 {
		t.Errorf("only %d suite schemas compiled: the fast checker covers too little", compiled)
	}
}

// suiteTest is one test of the JSON-Schema-Test-Suite.
type suiteTest struct {
	Description string          `json:"description"`
	Data        json.RawMessage `json:"data"`
	Valid       bool            `json:"valid"`
}

// suiteCase is one group of the suite as its file holds it: a schema and
// its tests.
type suiteCase struct {
	file        string
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []suiteTest     `json:"tests"`
}

// suiteCases reads every group of the required Draft 2020-12 tests
// (tests/draft2020-12/*.json, not optional/), in file order.
func suiteCases(t testing.TB, suite string) []suiteCase {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(suite, "tests", "draft2020-12", "*.json"))
	var out []suiteCase
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var groups []suiteCase
		if err := json.Unmarshal(raw, &groups); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, g := range groups {
			g.file = filepath.Base(file)
			out = append(out, g)
		}
	}
	return out
}

// suiteGroup is one group of the JSON-Schema-Test-Suite, loaded as a
// catalog of its own (the suite's remotes reachable by their
// http://localhost:1234/ identities from local files only).
type suiteGroup struct {
	file, description string
	cat               *Catalog
	loadErr           error
	tests             []suiteTest
}

// eachSuiteGroup calls fn for every group of the required Draft 2020-12 tests.
func eachSuiteGroup(t *testing.T, fn func(g suiteGroup)) {
	suite := repoData(t, suiteData)
	remotes := filepath.Join(suite, "remotes")
	for _, g := range suiteCases(t, suite) {
		root := t.TempDir()
		os.WriteFile(filepath.Join(root, "group.schema.json"), g.Schema, 0o600)
		cat, err := Load(root, "", Options{URLMap: map[string]string{"http://localhost:1234/": remotes}})
		fn(suiteGroup{file: g.file, description: g.Description, cat: cat, loadErr: err, tests: g.Tests})
	}
}
