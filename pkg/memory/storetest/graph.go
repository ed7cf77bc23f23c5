package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// RunGraph runs the memory graph's contract against stores from newStore,
// which must also implement store.Graph. Each subtest gets its own empty
// store.
func RunGraph(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, s store.Store, g store.Graph)
	}{
		{"CreateEntitiesIgnoresExisting", testCreateEntities},
		{"RelationsMayDangle", testCreateRelations},
		{"AddObservationsAllOrNothing", testAddObservations},
		{"DeleteEntitiesCascades", testDeleteEntities},
		{"DeleteObservationsAndRelations", testDeleteObsRels},
		{"ReadGraphPages", testReadGraphPages},
		{"SearchNodesSuperset", testSearchNodes},
		{"OpenNodes", testOpenNodes},
		{"Related", testRelated},
		{"ImportIdempotent", testImport},
		{"Extractions", testExtractions},
		{"MemoryDeleteRemovesLinks", testMemoryDeleteLinks},
		{"GraphWorkspaces", testGraphWorkspaces},
		{"ConcurrentOverlappingWriters", testGraphConcurrent},
		{"GraphClosed", testGraphClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			g, ok := s.(store.Graph)
			if !ok {
				t.Fatalf("%T does not implement store.Graph", s)
			}
			tc.run(t, s, g)
		})
	}
}

var bg = context.Background()

func ent(name, typ string, obs ...string) store.Entity {
	if obs == nil {
		obs = []string{}
	}
	return store.Entity{Name: name, Type: typ, Observations: obs}
}

func rel(from, to, typ string) store.Relation { return store.Relation{From: from, To: to, Type: typ} }

func names(es []store.Entity) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name
	}
	return out
}

func mustCreate(t *testing.T, g store.Graph, ws string, es ...store.Entity) {
	t.Helper()
	if _, err := g.CreateEntities(bg, ws, es); err != nil {
		t.Fatal(err)
	}
}

func mustRelate(t *testing.T, g store.Graph, ws string, rs ...store.Relation) {
	t.Helper()
	if _, err := g.CreateRelations(bg, ws, rs); err != nil {
		t.Fatal(err)
	}
}

// whole reads ws's graph through every page.
func whole(t *testing.T, g store.Graph, ws string, limit int) store.Subgraph {
	t.Helper()
	var out store.Subgraph
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 100000 {
			t.Fatal("ReadGraph never ends")
		}
		p, err := g.ReadGraph(bg, ws, cursor, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Entities)+len(p.Relations) > limit {
			t.Fatalf("a page of %d items for limit %d", len(p.Entities)+len(p.Relations), limit)
		}
		out.Entities = append(out.Entities, p.Entities...)
		out.Relations = append(out.Relations, p.Relations...)
		if p.Next == "" {
			return out
		}
		cursor = p.Next
	}
}

func entity(t *testing.T, g store.Graph, ws, name string) (store.Entity, bool) {
	t.Helper()
	sg, err := g.OpenNodes(bg, ws, []string{name})
	if err != nil {
		t.Fatal(err)
	}
	if len(sg.Entities) == 0 {
		return store.Entity{}, false
	}
	return sg.Entities[0], true
}

func testCreateEntities(t *testing.T, _ store.Store, g store.Graph) {
	got, err := g.CreateEntities(bg, "default", []store.Entity{
		ent("Alice", "person", "likes tea", "likes tea", "works remotely"),
		ent("Bob", "person"),
		ent("Alice", "robot", "repeated in the same call"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names(got), []string{"Alice", "Bob"}) {
		t.Fatalf("created %v, want [Alice Bob]", names(got))
	}
	if !slices.Equal(got[0].Observations, []string{"likes tea", "works remotely"}) || got[0].Type != "person" {
		t.Fatalf("Alice as created: %+v", got[0])
	}
	got, err = g.CreateEntities(bg, "default", []store.Entity{ent("Alice", "other", "new"), ent("Carol", "person")})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names(got), []string{"Carol"}) {
		t.Fatalf("created %v, want [Carol]: an existing name is ignored", names(got))
	}
	a, _ := entity(t, g, "default", "Alice")
	if a.Type != "person" || !slices.Equal(a.Observations, []string{"likes tea", "works remotely"}) {
		t.Fatalf("an ignored create changed Alice: %+v", a)
	}
	if got := names(whole(t, g, "default", 100).Entities); !slices.Equal(got, []string{"Alice", "Bob", "Carol"}) {
		t.Fatalf("read in creation order: %v", got)
	}
	if got, err := g.CreateEntities(bg, "default", nil); err != nil || len(got) != 0 {
		t.Fatalf("no entities: %v %v", got, err)
	}
}

func testCreateRelations(t *testing.T, _ store.Store, g store.Graph) {
	mustCreate(t, g, "default", ent("Alice", "person"))
	got, err := g.CreateRelations(bg, "default", []store.Relation{
		rel("Alice", "Nowhere", "lives_in"), rel("Alice", "Nowhere", "lives_in"), rel("Ghost", "Alice", "haunts"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != rel("Alice", "Nowhere", "lives_in") || got[1] != rel("Ghost", "Alice", "haunts") {
		t.Fatalf("created %v", got)
	}
	got, err = g.CreateRelations(bg, "default", []store.Relation{rel("Alice", "Nowhere", "lives_in"), rel("Alice", "Nowhere", "visits")})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Type != "visits" {
		t.Fatalf("an existing triple must be ignored, another type created: %v", got)
	}
	rs := whole(t, g, "default", 100).Relations
	if len(rs) != 3 {
		t.Fatalf("relations %v", rs)
	}
}

func testAddObservations(t *testing.T, _ store.Store, g store.Graph) {
	mustCreate(t, g, "default", ent("Alice", "person", "likes tea"), ent("Bob", "person"))
	_, err := g.AddObservations(bg, "default", []store.ObservationAdd{
		{Entity: "Alice", Contents: []string{"plays chess"}},
		{Entity: "Nobody", Contents: []string{"x"}},
	})
	var missing *store.MissingEntityError
	if !errors.As(err, &missing) || missing.Name != "Nobody" || err.Error() != "Entity with name Nobody not found" {
		t.Fatalf("observations for a missing entity: %v", err)
	}
	if a, _ := entity(t, g, "default", "Alice"); !slices.Equal(a.Observations, []string{"likes tea"}) {
		t.Fatalf("a refused call wrote something: %v", a.Observations)
	}
	got, err := g.AddObservations(bg, "default", []store.ObservationAdd{
		{Entity: "Alice", Contents: []string{"likes tea", "plays chess", "plays chess"}},
		{Entity: "Bob", Contents: []string{}},
		{Entity: "Alice", Contents: []string{"plays chess", "sings"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.ObservationsAdded{{Entity: "Alice", Added: []string{"plays chess"}}, {Entity: "Bob", Added: []string{}}, {Entity: "Alice", Added: []string{"sings"}}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].Entity != want[i].Entity || !slices.Equal(got[i].Added, want[i].Added) || got[i].Added == nil {
			t.Fatalf("result %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if a, _ := entity(t, g, "default", "Alice"); !slices.Equal(a.Observations, []string{"likes tea", "plays chess", "sings"}) {
		t.Fatalf("observations in the order added: %v", a.Observations)
	}
}

func testDeleteEntities(t *testing.T, s store.Store, g store.Graph) {
	mustCreate(t, g, "default", ent("Alice", "person", "a"), ent("Bob", "person"), ent("Carol", "person"))
	mustRelate(t, g, "default", rel("Alice", "Bob", "knows"), rel("Bob", "Carol", "knows"), rel("Ghost", "Bob", "haunts"), rel("Carol", "Alice", "knows"))
	id := add(t, s, "default", "Alice met Bob", store.Metadata{})
	if _, err := g.ApplyExtractions(bg, []store.Extraction{{MemoryID: id, Entities: []store.Entity{ent("Alice", "person"), ent("Bob", "person")}, Extractor: "test"}}); err != nil {
		t.Fatal(err)
	}
	if err := g.DeleteEntities(bg, "default", []string{"Bob", "Ghost", "Nobody"}); err != nil {
		t.Fatal(err)
	}
	gr := whole(t, g, "default", 100)
	if !slices.Equal(names(gr.Entities), []string{"Alice", "Carol"}) {
		t.Fatalf("entities %v", names(gr.Entities))
	}
	if len(gr.Relations) != 1 || gr.Relations[0] != rel("Carol", "Alice", "knows") {
		t.Fatalf("relations naming Bob or Ghost must go: %v", gr.Relations)
	}
	m, err := g.Mentions(bg, []string{id})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m[id], []string{"Alice"}) {
		t.Fatalf("links of a deleted entity must go: %v", m[id])
	}
	// Recreated, Bob starts bare.
	mustCreate(t, g, "default", ent("Bob", "robot"))
	if b, _ := entity(t, g, "default", "Bob"); b.Type != "robot" || len(b.Observations) != 0 {
		t.Fatalf("recreated Bob: %+v", b)
	}
	if err := g.DeleteEntities(bg, "default", nil); err != nil {
		t.Fatal(err)
	}
}

func testDeleteObsRels(t *testing.T, _ store.Store, g store.Graph) {
	mustCreate(t, g, "default", ent("Alice", "person", "a", "b", "c"))
	mustRelate(t, g, "default", rel("Alice", "Bob", "knows"), rel("Alice", "Bob", "likes"))
	if err := g.DeleteObservations(bg, "default", []store.ObservationDelete{
		{Entity: "Alice", Observations: []string{"b", "zzz"}}, {Entity: "Nobody", Observations: []string{"a"}},
	}); err != nil {
		t.Fatal(err)
	}
	if a, _ := entity(t, g, "default", "Alice"); !slices.Equal(a.Observations, []string{"a", "c"}) {
		t.Fatalf("observations %v", a.Observations)
	}
	if err := g.DeleteRelations(bg, "default", []store.Relation{rel("Alice", "Bob", "likes"), rel("Bob", "Alice", "knows")}); err != nil {
		t.Fatal(err)
	}
	if rs := whole(t, g, "default", 10).Relations; len(rs) != 1 || rs[0] != rel("Alice", "Bob", "knows") {
		t.Fatalf("relations %v", rs)
	}
	// A deleted observation can come back, at the end.
	if _, err := g.AddObservations(bg, "default", []store.ObservationAdd{{Entity: "Alice", Contents: []string{"b"}}}); err != nil {
		t.Fatal(err)
	}
	if a, _ := entity(t, g, "default", "Alice"); !slices.Equal(a.Observations, []string{"a", "c", "b"}) {
		t.Fatalf("observations %v", a.Observations)
	}
}

func testReadGraphPages(t *testing.T, _ store.Store, g store.Graph) {
	var es []store.Entity
	var rs []store.Relation
	for i := 0; i < 25; i++ {
		es = append(es, ent(fmt.Sprintf("e%02d", i), "thing", fmt.Sprintf("observation %d", i)))
		if i > 0 {
			rs = append(rs, rel(fmt.Sprintf("e%02d", i-1), fmt.Sprintf("e%02d", i), "next"))
		}
	}
	mustCreate(t, g, "default", es...)
	mustRelate(t, g, "default", rs...)
	for _, limit := range []int{1, 7, 25, 49, 1000} {
		gr := whole(t, g, "default", limit)
		if len(gr.Entities) != 25 || len(gr.Relations) != 24 {
			t.Fatalf("limit %d: %d entities, %d relations", limit, len(gr.Entities), len(gr.Relations))
		}
		for i, e := range gr.Entities {
			if e.Name != es[i].Name || !slices.Equal(e.Observations, es[i].Observations) {
				t.Fatalf("limit %d: entity %d = %+v", limit, i, e)
			}
		}
		for i, r := range gr.Relations {
			if r != rs[i] {
				t.Fatalf("limit %d: relation %d = %+v", limit, i, r)
			}
		}
	}
	// Pages are stable while the graph changes: what was deleted is not
	// returned, what was created after the cursor is.
	p, err := g.ReadGraph(bg, "default", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.DeleteEntities(bg, "default", []string{"e10"}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, g, "default", ent("late", "thing"))
	rest := store.Subgraph{Entities: p.Entities}
	for cursor := p.Next; cursor != ""; {
		p, err := g.ReadGraph(bg, "default", cursor, 10)
		if err != nil {
			t.Fatal(err)
		}
		rest.Entities = append(rest.Entities, p.Entities...)
		rest.Relations = append(rest.Relations, p.Relations...)
		cursor = p.Next
	}
	got := names(rest.Entities)
	if len(got) != 25 || slices.Contains(got, "e10") || got[24] != "late" {
		t.Fatalf("after a delete and a create between pages: %v", got)
	}
	for _, bad := range []string{"not-a-cursor", "AAAA", p.Next + "x"} {
		if _, err := g.ReadGraph(bg, "default", bad, 10); !errors.Is(err, store.ErrBadCursor) {
			t.Fatalf("cursor %q: %v, want ErrBadCursor", bad, err)
		}
	}
	if p.Next != "" {
		if _, err := g.ReadGraph(bg, "other", p.Next, 10); !errors.Is(err, store.ErrBadCursor) {
			t.Fatalf("another workspace's cursor: %v, want ErrBadCursor", err)
		}
	}
	if p, err := g.ReadGraph(bg, "empty", "", 10); err != nil || len(p.Entities)+len(p.Relations) != 0 || p.Next != "" {
		t.Fatalf("empty workspace: %+v %v", p, err)
	}
}

// officialMatch is the official memory server's search: the query, lowered,
// inside the lowered name, type or an observation.
func officialMatch(e store.Entity, q string) bool {
	q = strings.ToLower(q)
	if strings.Contains(strings.ToLower(e.Name), q) || strings.Contains(strings.ToLower(e.Type), q) {
		return true
	}
	for _, o := range e.Observations {
		if strings.Contains(strings.ToLower(o), q) {
			return true
		}
	}
	return false
}

func testSearchNodes(t *testing.T, _ store.Store, g store.Graph) {
	es := []store.Entity{
		ent("PostgreSQL", "database", "the main store", "runs on port 5432"),
		ent("Redis", "cache", "sits in front of PostgreSQL"),
		ent("Alice", "person", "administers the database servers"),
		ent("Bob", "person", "writes articles"),
		ent("Cartography", "topic", "maps and charts"),
	}
	mustCreate(t, g, "default", es...)
	mustRelate(t, g, "default", rel("Redis", "PostgreSQL", "caches"), rel("Alice", "PostgreSQL", "administers"), rel("Bob", "Alice", "knows"))
	for _, q := range []string{"postgresql", "ART", "database", "person", "5432", "", "no such thing", "sql", "the"} {
		res, err := g.SearchNodes(bg, "default", q, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, e := range res.Entities {
			got[e.Name] = true
		}
		for _, e := range es {
			if officialMatch(e, q) && !got[e.Name] {
				t.Fatalf("query %q: %s matches as a substring but was not returned (got %v)", q, e.Name, got)
			}
		}
		for i := 1; i < len(res.Entities); i++ {
			if res.Entities[i].Score > res.Entities[i-1].Score {
				t.Fatalf("query %q: not ranked: %+v", q, res.Entities)
			}
		}
		// Relations: every one touching a result, and no other.
		for _, r := range whole(t, g, "default", 100).Relations {
			if touches := got[r.From] || got[r.To]; touches != slices.Contains(res.Relations, r) {
				t.Fatalf("query %q: relation %v returned=%v, touches a result=%v", q, r, !touches, touches)
			}
		}
	}
	res, err := g.SearchNodes(bg, "default", "postgresql", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entities) != 2 || res.Entities[0].Name != "PostgreSQL" {
		t.Fatalf("the entity named by the query ranks first: %+v", res.Entities)
	}
	// Words, not only the substring: both words appear, apart.
	res, err = g.SearchNodes(bg, "default", "database administers", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entities) == 0 || res.Entities[0].Name != "Alice" {
		t.Fatalf("ranked words: %+v", res.Entities)
	}
	res, err = g.SearchNodes(bg, "default", "", 2)
	if err != nil || len(res.Entities) != 2 {
		t.Fatalf("limit 2: %+v %v", res.Entities, err)
	}
}

func testOpenNodes(t *testing.T, _ store.Store, g store.Graph) {
	mustCreate(t, g, "default", ent("A", "t"), ent("B", "t"), ent("C", "t"))
	mustRelate(t, g, "default", rel("A", "B", "r"), rel("B", "C", "r"), rel("C", "Z", "r"), rel("Y", "Z", "r"))
	sg, err := g.OpenNodes(bg, "default", []string{"C", "A", "Z", "A"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names(sg.Entities), []string{"A", "C"}) {
		t.Fatalf("entities %v (creation order, missing names ignored)", names(sg.Entities))
	}
	// Relations with an endpoint among the entities found: not Y→Z (Z was
	// asked for but is no entity).
	want := []store.Relation{rel("A", "B", "r"), rel("B", "C", "r"), rel("C", "Z", "r")}
	if !slices.Equal(sg.Relations, want) {
		t.Fatalf("relations %v, want %v", sg.Relations, want)
	}
	if sg, err := g.OpenNodes(bg, "default", nil); err != nil || len(sg.Entities)+len(sg.Relations) != 0 {
		t.Fatalf("no names: %+v %v", sg, err)
	}
}

func testRelated(t *testing.T, s store.Store, g store.Graph) {
	mustCreate(t, g, "default", ent("hearth", "project"), ent("SQLite", "database"), ent("Go", "language"), ent("WAL", "concept"))
	mustRelate(t, g, "default",
		rel("hearth", "SQLite", "uses"), rel("hearth", "Go", "written_in"), rel("SQLite", "WAL", "uses"),
		rel("Alice", "hearth", "maintains"), rel("WAL", "fsync", "needs"))
	rels, err := g.Related(bg, store.RelatedQuery{Workspace: "default", Name: "hearth", Depth: 1, Direction: store.Both})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, r := range rels {
		got[r.Name] = r.Depth
	}
	if len(got) != 3 || got["SQLite"] != 1 || got["Go"] != 1 || got["Alice"] != 1 {
		t.Fatalf("depth 1: %v", got)
	}
	for _, r := range rels {
		if r.Name == "Alice" && (r.Exists || r.Via != rel("Alice", "hearth", "maintains")) {
			t.Fatalf("Alice exists only as a relation's end: %+v", r)
		}
		if r.Name == "SQLite" && (!r.Exists || r.Type != "database") {
			t.Fatalf("SQLite: %+v", r)
		}
	}
	rels, err = g.Related(bg, store.RelatedQuery{Workspace: "default", Name: "hearth", Depth: 3, Direction: store.Outgoing})
	if err != nil {
		t.Fatal(err)
	}
	got = map[string]int{}
	for _, r := range rels {
		got[r.Name] = r.Depth
	}
	if len(got) != 4 || got["WAL"] != 2 || got["fsync"] != 3 || got["Alice"] != 0 {
		t.Fatalf("outgoing, depth 3: %v", got)
	}
	if rels[0].Depth != 1 || rels[len(rels)-1].Name != "fsync" {
		t.Fatalf("ranking: closer first: %+v", rels)
	}
	rels, err = g.Related(bg, store.RelatedQuery{Workspace: "default", Name: "hearth", Depth: 3, Direction: store.Outgoing, Types: []string{"uses"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) != 2 || rels[0].Name != "SQLite" || rels[1].Name != "WAL" {
		t.Fatalf("only 'uses': %+v", rels)
	}
	rels, err = g.Related(bg, store.RelatedQuery{Workspace: "default", Name: "hearth", Depth: 2, Direction: store.Incoming})
	if err != nil || len(rels) != 1 || rels[0].Name != "Alice" {
		t.Fatalf("incoming: %+v %v", rels, err)
	}
	if _, err := g.Related(bg, store.RelatedQuery{Workspace: "default", Name: "nobody", Depth: 1, Direction: store.Both}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown name: %v", err)
	}
	rels, err = g.Related(bg, store.RelatedQuery{Workspace: "default", Name: "hearth", Depth: 3, Direction: store.Both, Limit: 2})
	if err != nil || len(rels) != 2 {
		t.Fatalf("limit 2: %+v %v", rels, err)
	}
}

func testImport(t *testing.T, _ store.Store, g store.Graph) {
	mustCreate(t, g, "default", ent("Alice", "person", "likes tea"))
	in := store.Subgraph{
		Entities:  []store.Entity{ent("Alice", "robot", "plays chess", "likes tea"), ent("Bob", "person", "x"), ent("Bob", "person", "y")},
		Relations: []store.Relation{rel("Alice", "Bob", "knows"), rel("Alice", "Bob", "knows")},
	}
	res, err := g.Import(bg, "default", in)
	if err != nil {
		t.Fatal(err)
	}
	if res != (store.ImportResult{EntitiesCreated: 1, ObservationsAdded: 3, RelationsCreated: 1}) {
		t.Fatalf("first import: %+v", res)
	}
	before := whole(t, g, "default", 100)
	res, err = g.Import(bg, "default", in)
	if err != nil {
		t.Fatal(err)
	}
	if res != (store.ImportResult{}) {
		t.Fatalf("a second import must change nothing: %+v", res)
	}
	after := whole(t, g, "default", 100)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("second import changed the graph:\n%v\n%v", before, after)
	}
	a, _ := entity(t, g, "default", "Alice")
	if a.Type != "person" || !slices.Equal(a.Observations, []string{"likes tea", "plays chess"}) {
		t.Fatalf("Alice merged: %+v", a)
	}
	if b, _ := entity(t, g, "default", "Bob"); !slices.Equal(b.Observations, []string{"x", "y"}) {
		t.Fatalf("Bob: %+v", b)
	}
}

func testExtractions(t *testing.T, s store.Store, g store.Graph) {
	old := add(t, s, "default", "Alice uses PostgreSQL", store.Metadata{Time: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
	recent := add(t, s, "default", "Bob uses PostgreSQL too", store.Metadata{Time: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)})
	other := add(t, s, "other", "Carol", store.Metadata{})
	pend, err := g.PendingExtraction(bg, store.ExtractScope{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := memIDs(pend); !slices.Equal(got, []string{old, recent, other}) {
		t.Fatalf("pending %v", got)
	}
	if n, err := g.CountPending(bg, store.ExtractScope{}); err != nil || n != 3 {
		t.Fatalf("count pending %d %v", n, err)
	}
	if n, err := g.CountPending(bg, store.ExtractScope{Workspace: "default", Since: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)}); err != nil || n != 1 {
		t.Fatalf("count pending since %d %v", n, err)
	}
	pend, err = g.PendingExtraction(bg, store.ExtractScope{Workspace: "default", Since: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)}, 10)
	if err != nil || !slices.Equal(memIDs(pend), []string{recent}) {
		t.Fatalf("pending since: %v %v", memIDs(pend), err)
	}
	rec, err := g.ApplyExtractions(bg, []store.Extraction{
		{MemoryID: old, Extractor: "rules", Entities: []store.Entity{ent("Alice", "name"), ent("PostgreSQL", "name")}, Relations: []store.Relation{rel("Alice", "PostgreSQL", "uses")}},
		{MemoryID: recent, Extractor: "rules", Entities: []store.Entity{ent("Bob", "name"), ent("PostgreSQL", "name"), ent("Bob", "name")}, Relations: []store.Relation{rel("Bob", "PostgreSQL", "uses")}},
		{MemoryID: "no-such-memory", Extractor: "rules", Entities: []store.Entity{ent("Ghost", "name")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Memories != 2 || rec.EntitiesCreated != 3 || rec.RelationsCreated != 2 || rec.Links != 4 {
		t.Fatalf("applied %+v", rec)
	}
	if _, ok := entity(t, g, "default", "Ghost"); ok {
		t.Fatal("an extraction for a missing memory was written")
	}
	pend, err = g.PendingExtraction(bg, store.ExtractScope{}, 10)
	if err != nil || !slices.Equal(memIDs(pend), []string{other}) {
		t.Fatalf("pending after: %v %v", memIDs(pend), err)
	}
	m, err := g.Mentions(bg, []string{old, recent, other})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m[old], []string{"Alice", "PostgreSQL"}) || !slices.Equal(m[recent], []string{"Bob", "PostgreSQL"}) || len(m[other]) != 0 {
		t.Fatalf("mentions %v", m)
	}
	in, err := g.MentionedIn(bg, "default", []string{"PostgreSQL", "Nobody"}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if refs := in["PostgreSQL"]; len(refs) != 2 || refs[0].ID != recent || refs[1].ID != old || refs[0].Text != "Bob uses PostgreSQL too" {
		t.Fatalf("mentioned in (newest first): %+v", refs)
	}
	// A second apply of the same extraction links nothing new.
	rec, err = g.ApplyExtractions(bg, []store.Extraction{{MemoryID: old, Extractor: "rules", Entities: []store.Entity{ent("Alice", "name")}}})
	if err != nil || rec.Links != 0 || rec.EntitiesCreated != 0 || rec.Memories != 1 {
		t.Fatalf("re-apply: %+v %v", rec, err)
	}
	st, err := g.GraphStats(bg, "default", 5)
	if err != nil {
		t.Fatal(err)
	}
	if st.Entities != 3 || st.Relations != 2 || st.Links != 4 || st.Extracted != 2 || st.Pending != 0 || st.LastBuild != nil {
		t.Fatalf("stats %+v", st)
	}
	if len(st.MostMentioned) == 0 || st.MostMentioned[0] != (store.Mention{Workspace: "default", Name: "PostgreSQL", Memories: 2}) {
		t.Fatalf("most mentioned %+v", st.MostMentioned)
	}
	if st, err := g.GraphStats(bg, "", 5); err != nil || st.Pending != 1 || st.Extracted != 2 {
		t.Fatalf("stats of every workspace %+v %v", st, err)
	}
	b := store.BuildRecord{Scope: store.ExtractScope{Workspace: "default"}, Extractor: "rules", Started: time.Now().Add(-time.Second).Truncate(time.Millisecond),
		Finished: time.Now().Truncate(time.Millisecond), Status: "completed", Memories: 2, EntitiesCreated: 3, RelationsCreated: 2, Links: 4}
	if err := g.RecordBuild(bg, b); err != nil {
		t.Fatal(err)
	}
	st, err = g.GraphStats(bg, "default", 0)
	if err != nil || st.LastBuild == nil || st.LastBuild.Status != "completed" || st.LastBuild.Links != 4 || !st.LastBuild.Started.Equal(b.Started) {
		t.Fatalf("last build %+v %v", st.LastBuild, err)
	}
	if st, err := g.GraphStats(bg, "other", 0); err != nil || st.LastBuild != nil {
		t.Fatalf("a build of another workspace: %+v %v", st.LastBuild, err)
	}
	if err := g.ForgetExtraction(bg, store.ExtractScope{Workspace: "default"}); err != nil {
		t.Fatal(err)
	}
	pend, err = g.PendingExtraction(bg, store.ExtractScope{}, 10)
	if err != nil || !slices.Equal(memIDs(pend), []string{old, recent, other}) {
		t.Fatalf("pending after forget: %v %v", memIDs(pend), err)
	}
	if m, _ := g.Mentions(bg, []string{old}); len(m[old]) != 2 {
		t.Fatalf("forgetting marks keeps the links: %v", m)
	}
}

func memIDs(ms []store.Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func testMemoryDeleteLinks(t *testing.T, s store.Store, g store.Graph) {
	id := add(t, s, "default", "Alice and Bob", store.Metadata{})
	keep := add(t, s, "default", "Alice alone", store.Metadata{})
	if _, err := g.ApplyExtractions(bg, []store.Extraction{
		{MemoryID: id, Extractor: "rules", Entities: []store.Entity{ent("Alice", "name"), ent("Bob", "name")}},
		{MemoryID: keep, Extractor: "rules", Entities: []store.Entity{ent("Alice", "name")}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(bg, id); err != nil {
		t.Fatal(err)
	}
	in, err := g.MentionedIn(bg, "default", []string{"Alice", "Bob"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(in["Bob"]) != 0 || len(in["Alice"]) != 1 || in["Alice"][0].ID != keep {
		t.Fatalf("links after the memory's delete: %+v", in)
	}
	if _, ok := entity(t, g, "default", "Bob"); !ok {
		t.Fatal("deleting a memory must keep the entities it mentioned")
	}
	st, err := g.GraphStats(bg, "default", 0)
	if err != nil || st.Links != 1 || st.Extracted != 1 {
		t.Fatalf("stats %+v %v", st, err)
	}
}

func testGraphWorkspaces(t *testing.T, _ store.Store, g store.Graph) {
	mustCreate(t, g, "a", ent("Alice", "person", "only in alpha"))
	mustCreate(t, g, "b", ent("Alice", "robot", "only in beta"))
	mustRelate(t, g, "a", rel("Alice", "Bob", "knows"))
	if a, _ := entity(t, g, "a", "Alice"); a.Type != "person" {
		t.Fatalf("a: %+v", a)
	}
	if b, _ := entity(t, g, "b", "Alice"); b.Type != "robot" {
		t.Fatalf("b: %+v", b)
	}
	if rs := whole(t, g, "b", 10).Relations; len(rs) != 0 {
		t.Fatalf("b sees a's relations: %v", rs)
	}
	if res, _ := g.SearchNodes(bg, "b", "alpha", 0); len(res.Entities) != 0 {
		t.Fatalf("b finds a's entity: %+v", res)
	}
	if err := g.DeleteEntities(bg, "b", []string{"Alice"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := entity(t, g, "a", "Alice"); !ok {
		t.Fatal("a delete in b removed a's entity")
	}
	if _, err := g.AddObservations(bg, "b", []store.ObservationAdd{{Entity: "Alice", Contents: []string{"x"}}}); err == nil {
		t.Fatal("b has no Alice any more")
	}
}

// testGraphConcurrent: 16 writers create overlapping entities and relations
// at once; each is created exactly once, and exactly one writer is told so.
func testGraphConcurrent(t *testing.T, _ store.Store, g store.Graph) {
	const writers, per = 16, 40
	var mu sync.Mutex
	createdE := map[string]int{}
	createdR := map[store.Relation]int{}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				// Writers w and w+1 share half their names.
				a, b := fmt.Sprintf("n%d", (w*per/2+i)%(writers*per/2)), fmt.Sprintf("n%d", (w*per/2+i+1)%(writers*per/2))
				es, err := g.CreateEntities(bg, "default", []store.Entity{ent(a, "node", "seen by "+a), ent(b, "node")})
				if err != nil {
					t.Error(err)
					return
				}
				rs, err := g.CreateRelations(bg, "default", []store.Relation{rel(a, b, "next")})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, e := range es {
					createdE[e.Name]++
				}
				for _, r := range rs {
					createdR[r]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	gr := whole(t, g, "default", 1000)
	seen := map[string]bool{}
	for _, e := range gr.Entities {
		if seen[e.Name] {
			t.Fatalf("duplicate entity %s", e.Name)
		}
		seen[e.Name] = true
		if createdE[e.Name] != 1 {
			t.Fatalf("%s reported created %d times", e.Name, createdE[e.Name])
		}
	}
	if len(gr.Entities) != len(createdE) || len(gr.Entities) != writers*per/2 {
		t.Fatalf("%d entities stored, %d reported created, want %d", len(gr.Entities), len(createdE), writers*per/2)
	}
	seenR := map[store.Relation]bool{}
	for _, r := range gr.Relations {
		if seenR[r] || createdR[r] != 1 {
			t.Fatalf("relation %v: duplicate or reported created %d times", r, createdR[r])
		}
		seenR[r] = true
	}
	if len(gr.Relations) != len(createdR) {
		t.Fatalf("%d relations stored, %d reported created", len(gr.Relations), len(createdR))
	}
}

func testGraphClosed(t *testing.T, s store.Store, g store.Graph) {
	s.Close()
	if _, err := g.CreateEntities(bg, "default", []store.Entity{ent("A", "t")}); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("create after close: %v", err)
	}
	if _, err := g.ReadGraph(bg, "default", "", 10); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("read after close: %v", err)
	}
	if err := g.DeleteEntities(bg, "default", nil); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("empty delete after close: %v", err)
	}
}
