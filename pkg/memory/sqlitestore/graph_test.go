package sqlitestore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/memory/sqlitestore"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// TestGraphReopens: the in-memory graph is rebuilt from the file: entities,
// observation order, relations (dangling ones too), read order and links.
func TestGraphReopens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateEntities(ctx, "default", []store.Entity{{Name: "B", Type: "t", Observations: []string{"z", "a"}}, {Name: "A", Type: "t"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateEntities(ctx, "w2", []store.Entity{{Name: "C", Type: "t"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateRelations(ctx, "default", []store.Relation{{From: "B", To: "A", Type: "r"}, {From: "A", To: "Nowhere", Type: "r"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddObservations(ctx, "default", []store.ObservationAdd{{Entity: "B", Contents: []string{"m"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteObservations(ctx, "default", []store.ObservationDelete{{Entity: "B", Observations: []string{"z"}}}); err != nil {
		t.Fatal(err)
	}
	id, err := s.Add(ctx, store.NewMemory{Workspace: "default", Text: "B and A", Chunks: []string{"B and A"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyExtractions(ctx, []store.Extraction{{MemoryID: id, Extractor: "x", Entities: []store.Entity{{Name: "A", Type: "t"}}}}); err != nil {
		t.Fatal(err)
	}
	before, err := s.ReadGraph(ctx, "default", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	after, err := s.ReadGraph(ctx, "default", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("before reopen %v\nafter %v", before, after)
	}
	if got := after.Entities[0]; got.Name != "B" || !slices.Equal(got.Observations, []string{"a", "m"}) {
		t.Fatalf("B after reopen: %+v", got)
	}
	if p, _ := s.ReadGraph(ctx, "w2", "", 10); len(p.Entities) != 1 || p.Entities[0].Name != "C" {
		t.Fatalf("w2 after reopen: %+v", p)
	}
	if m, _ := s.Mentions(ctx, []string{id}); !slices.Equal(m[id], []string{"A"}) {
		t.Fatalf("links after reopen: %v", m)
	}
	res, err := s.SearchNodes(ctx, "default", "m", 0)
	if err != nil || len(res.Entities) != 1 || res.Entities[0].Name != "B" {
		t.Fatalf("search after reopen: %+v %v", res, err)
	}
}

// TestMigrateToGraph: a database of schema version 2 (memories only) opens
// with its memories intact and takes graph writes.
func TestMigrateToGraph(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	old, err := sqlitestore.CreateAtVersionForTest(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(`INSERT INTO memories(uid, workspace, text, source, tags, ts, added, chunks) VALUES ('old-0', 'default', 'Alice uses Go', '', '[]', 1000, 1000, 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(`INSERT INTO chunks(memory_id, seq, text) VALUES (last_insert_rowid(), 0, 'Alice uses Go')`); err != nil {
		t.Fatal(err)
	}
	old.Close()
	s, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m, err := s.Get(ctx, "old-0"); err != nil || m.Text != "Alice uses Go" {
		t.Fatalf("old memory: %+v %v", m, err)
	}
	pend, err := s.PendingExtraction(ctx, store.ExtractScope{}, 10)
	if err != nil || len(pend) != 1 || pend[0].ID != "old-0" {
		t.Fatalf("an old memory is pending extraction: %+v %v", pend, err)
	}
	if _, err := s.ApplyExtractions(ctx, []store.Extraction{{MemoryID: "old-0", Extractor: "x", Entities: []store.Entity{{Name: "Alice", Type: "name"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "old-0"); err != nil {
		t.Fatalf("delete of a migrated memory with links: %v", err)
	}
}

// TestImportLarge: one import of many entities, observations and relations
// is one transaction, and quick.
func TestImportLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large")
	}
	ctx := context.Background()
	s := newStore(t).(*sqlitestore.Store)
	const n = 20000
	g := store.Subgraph{}
	for i := 0; i < n; i++ {
		g.Entities = append(g.Entities, store.Entity{Name: fmt.Sprintf("entity-%d", i), Type: "thing",
			Observations: []string{fmt.Sprintf("observation one of %d", i), fmt.Sprintf("observation two of %d", i)}})
		g.Relations = append(g.Relations, store.Relation{From: fmt.Sprintf("entity-%d", i), To: fmt.Sprintf("entity-%d", (i+1)%n), Type: "next"})
	}
	start := time.Now()
	res, err := s.Import(ctx, "default", g)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("imported %d entities, %d observations, %d relations in %v", res.EntitiesCreated, res.ObservationsAdded, res.RelationsCreated, time.Since(start))
	if res != (store.ImportResult{EntitiesCreated: n, ObservationsAdded: 2 * n, RelationsCreated: n}) {
		t.Fatalf("import %+v", res)
	}
	st, err := s.GraphStats(ctx, "default", 0)
	if err != nil || st.Entities != n || st.Relations != n || st.Observations != 2*n {
		t.Fatalf("stats %+v %v", st, err)
	}
}
