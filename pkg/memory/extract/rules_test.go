package extract

import (
	"context"
	"slices"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

func extractRules(t *testing.T, text string) Result {
	t.Helper()
	res, err := Rules{}.Extract(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func entityTypes(res Result) map[string]string {
	m := map[string]string{}
	for _, e := range res.Entities {
		m[e.Name] = e.Type
	}
	return m
}

func TestRulesFindEntities(t *testing.T) {
	tests := []struct {
		text string
		want map[string]string // name → type; every one must be found
		not  []string          // names that must not be found
	}{
		{"See https://example.com/docs/setup.html, then read it.", map[string]string{"https://example.com/docs/setup.html": TypeURL}, []string{"example.com/docs/setup.html"}},
		{"The config lives in /etc/hearth/config.toml and ~/notes.", map[string]string{"/etc/hearth/config.toml": TypePath}, []string{"The"}},
		{"Edit pkg/memory/store/graph.go and main.go today.", map[string]string{"pkg/memory/store/graph.go": TypePath, "main.go": TypePath}, nil},
		{"Call `read_graph` with a cursor; add_memory stores, searchNodes ranks.", map[string]string{"read_graph": TypeIdentifier, "add_memory": TypeIdentifier, "searchNodes": TypeIdentifier}, nil},
		{"Use os.Getenv, not e.g. anything else; MAX_BATCH is 64.", map[string]string{"os.Getenv": TypeIdentifier, "MAX_BATCH": TypeIdentifier}, []string{"e.g", "Use"}},
		{"Alice Smith moved to New York with the Bank of England team.", map[string]string{"Alice Smith": TypeName, "New York": TypeName, "Bank of England": TypeName}, nil},
		{"We deployed on AWS yesterday. Today Bob fixed it.", map[string]string{"AWS": TypeName, "Bob": TypeName}, []string{"We", "Today", "Today Bob"}},
		{"The version 1.2.3 shipped and/or failed.", map[string]string{}, []string{"1.2.3", "and/or", "The"}},
	}
	for _, tc := range tests {
		got := entityTypes(extractRules(t, tc.text))
		for name, typ := range tc.want {
			if got[name] != typ {
				t.Errorf("%q: %q = %q, want %q (found %v)", tc.text, name, got[name], typ, got)
			}
		}
		for _, name := range tc.not {
			if _, ok := got[name]; ok {
				t.Errorf("%q: found %q (found %v)", tc.text, name, got)
			}
		}
	}
}

func TestRulesFindRelations(t *testing.T) {
	tests := []struct {
		text string
		want []store.Relation
	}{
		{"Alice uses PostgreSQL.", []store.Relation{{From: "Alice", To: "PostgreSQL", Type: "uses"}}},
		{"hearthd depends on modernc.org/sqlite and Zap.", nil},
		{"HearthDaemon depends on SQLite and Zap.", []store.Relation{{From: "HearthDaemon", To: "SQLite", Type: "depends_on"}, {From: "HearthDaemon", To: "Zap", Type: "depends_on"}}},
		{"Bob works at Acme Corp. Carol maintains `pkg/memory`.", []store.Relation{{From: "Bob", To: "Acme Corp", Type: "works_at"}, {From: "Carol", To: "pkg/memory", Type: "maintains"}}},
		{"Redis now also replaced Memcached", []store.Relation{{From: "Redis", To: "Memcached", Type: "replaces"}}},
		{"Alice no longer uses Oracle.", nil},
		{"Alice met Bob in Paris.", nil},
		{"The API Gateway runs on Kubernetes.", []store.Relation{{From: "API Gateway", To: "Kubernetes", Type: "runs_on"}}},
	}
	for _, tc := range tests {
		res := extractRules(t, tc.text)
		if !slices.Equal(res.Relations, tc.want) {
			t.Errorf("%q: relations %v, want %v (entities %v)", tc.text, res.Relations, tc.want, entityTypes(res))
		}
		ents := entityTypes(res)
		for _, r := range res.Relations {
			if _, ok := ents[r.From]; !ok {
				t.Errorf("%q: relation %v from an entity not listed", tc.text, r)
			}
			if _, ok := ents[r.To]; !ok {
				t.Errorf("%q: relation %v to an entity not listed", tc.text, r)
			}
		}
	}
}

func TestRulesDeterministicAndDistinct(t *testing.T) {
	text := "Alice uses Go. Alice uses Go. Bob uses Go and Rust.\nhttps://go.dev is where Go lives."
	a, b := extractRules(t, text), extractRules(t, text)
	if len(a.Entities) != len(b.Entities) || len(a.Relations) != len(b.Relations) {
		t.Fatal("two runs differ")
	}
	for i := range a.Entities {
		if a.Entities[i].Name != b.Entities[i].Name {
			t.Fatal("two runs differ")
		}
	}
	seen := map[string]bool{}
	for _, e := range a.Entities {
		if seen[e.Name] {
			t.Fatalf("%s listed twice", e.Name)
		}
		seen[e.Name] = true
	}
	if len(a.Relations) != 3 {
		t.Fatalf("relations %v", a.Relations)
	}
}

func TestRulesCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Rules{}).Extract(ctx, "Alice uses Go."); err == nil {
		t.Fatal("a cancelled extraction succeeded")
	}
}

func FuzzRules(f *testing.F) {
	for _, s := range []string{"Alice uses Go.", "`x` and https://a.b/c.", "ÉCOLE uses Σ. a/b/c.go", "....", "``", "A  of  B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		res, err := Rules{}.Extract(context.Background(), text)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, e := range res.Entities {
			if e.Name == "" || names[e.Name] {
				t.Fatalf("empty or repeated entity %q", e.Name)
			}
			names[e.Name] = true
		}
		for _, r := range res.Relations {
			if !names[r.From] || !names[r.To] || r.From == r.To {
				t.Fatalf("relation %v", r)
			}
		}
	})
}
