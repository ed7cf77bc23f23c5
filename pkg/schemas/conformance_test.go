package schemas

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestDraft2020Conformance runs every required test of the official
// JSON-Schema-Test-Suite (tests/draft2020-12/*.json, not optional/) through
// the catalog's validation path: each group's schema is a file in a schema
// root of its own, and the suite's remotes are reachable by their
// http://localhost:1234/ identities from local files only.
func TestDraft2020Conformance(t *testing.T) {
	suite := needFixture(t, "json-schema-test-suite")
	files, _ := filepath.Glob(filepath.Join(suite, "tests", "draft2020-12", "*.json"))
	remotes := filepath.Join(suite, "remotes")
	passed, total := 0, 0
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var groups []struct {
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Tests       []struct {
				Description string          `json:"description"`
				Data        json.RawMessage `json:"data"`
				Valid       bool            `json:"valid"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(raw, &groups); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, g := range groups {
			root := t.TempDir()
			os.WriteFile(filepath.Join(root, "group.schema.json"), g.Schema, 0o600)
			cat, err := Load(root, "", Options{URLMap: map[string]string{"http://localhost:1234/": remotes}})
			if err != nil {
				total += len(g.Tests)
				t.Errorf("%s / %s: schema did not load: %v", filepath.Base(file), g.Description, err)
				continue
			}
			for _, tc := range g.Tests {
				total++
				r := validateOne(cat, tc.Data, "group")
				if (r["ok"] == true) == tc.Valid {
					passed++
				} else {
					t.Errorf("%s / %s / %s: want valid=%v, got %v", filepath.Base(file), g.Description, tc.Description, tc.Valid, r)
				}
			}
		}
	}
	t.Logf("Draft 2020-12 conformance: %d/%d required tests pass", passed, total)
	if total != 1299 {
		t.Errorf("ran %d tests; the suite has 1299 required ones", total)
	}
}
