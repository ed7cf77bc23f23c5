// Package storetest is the contract every memory store must pass. An engine's
// tests call Run with a constructor for an empty store, and RunGraph (graph.go)
// when the engine also keeps the memory graph (store.Graph):
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { ... })
//	}
//
//	func TestGraphContract(t *testing.T) {
//		storetest.RunGraph(t, func(t *testing.T) store.Store { ... })
//	}
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

	"github.com/hearth-mcp/hearth/pkg/memory/chunk"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/memory/terms"
)

// Run runs the contract against stores from newStore. Each subtest gets its own
// empty store; newStore registers its own cleanup.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, s store.Store)
	}{
		{"AddGet", testAddGet},
		{"LongMemoryReturnedWhole", testLongMemory},
		{"Delete", testDelete},
		{"Filters", testFilters},
		{"FiltersBeforeLimit", testFiltersBeforeLimit},
		{"Stats", testStats},
		{"PhraseOutranksScattered", testPhraseRanking},
		{"UserSyntaxIsText", testUserSyntax},
		{"Unicode", testUnicode},
		{"ConcurrentWriters", testConcurrentWriters},
		{"WorkspaceIsolation", testWorkspaces},
		{"Vectors", testVectors},
		{"PendingVectors", testPendingVectors},
		{"Closed", testClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

func add(t *testing.T, s store.Store, ws, text string, md store.Metadata) string {
	t.Helper()
	id, err := s.Add(context.Background(), store.NewMemory{Workspace: ws, Text: text, Metadata: md, Chunks: chunk.Split(text)})
	if err != nil {
		t.Fatalf("Add(%.40q): %v", text, err)
	}
	return id
}

func search(t *testing.T, s store.Store, ws, query string, f store.Filters, limit int) []store.Hit {
	t.Helper()
	hits, err := s.SearchLexical(context.Background(), store.Query{Workspace: ws, Filters: f, Limit: limit}, terms.Split(query))
	if err != nil {
		t.Fatalf("SearchLexical(%q): %v", query, err)
	}
	return hits
}

func ids(hits []store.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Memory.ID
	}
	return out
}

func testAddGet(t *testing.T, s store.Store) {
	when := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	md := store.Metadata{Source: "notes", Tags: []string{"go", "sqlite"}, Time: when}
	id := add(t, s, "default", "The daemon keeps one store for every client.", md)
	if id == "" {
		t.Fatal("Add returned an empty id")
	}
	m, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	want := store.Memory{ID: id, Workspace: "default", Text: "The daemon keeps one store for every client.", Metadata: md, Chunks: 1}
	if m.ID != want.ID || m.Workspace != want.Workspace || m.Text != want.Text || m.Chunks != 1 ||
		m.Metadata.Source != md.Source || !slices.Equal(m.Metadata.Tags, md.Tags) || !m.Metadata.Time.Equal(when) {
		t.Fatalf("Get = %+v, want %+v", m, want)
	}
	if _, err := s.Get(context.Background(), "no-such-id"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get(unknown) = %v, want ErrNotFound", err)
	}
	before := time.Now().Add(-time.Second)
	id2 := add(t, s, "default", "no timestamp given", store.Metadata{})
	m2, err := s.Get(context.Background(), id2)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Metadata.Time.Before(before) {
		t.Fatalf("a memory without timestamp should take the time it was added, got %v", m2.Metadata.Time)
	}
	if len(m2.Metadata.Tags) != 0 {
		t.Fatalf("tags = %v, want none", m2.Metadata.Tags)
	}
}

func testLongMemory(t *testing.T, s store.Store) {
	var b strings.Builder
	for i := 0; b.Len() < 5*chunk.Size; i++ {
		fmt.Fprintf(&b, "filler sentence number %d about nothing much. ", i)
	}
	b.WriteString("The zanzibar marker sits at the very end.")
	text := b.String()
	id := add(t, s, "default", text, store.Metadata{})
	hits := search(t, s, "default", "zanzibar", store.Filters{}, 10)
	if len(hits) != 1 || hits[0].Memory.ID != id {
		t.Fatalf("hits = %v, want [%s]", ids(hits), id)
	}
	h := hits[0]
	if h.Memory.Text != text {
		t.Fatalf("the memory must be returned whole: got %d bytes, want %d", len(h.Memory.Text), len(text))
	}
	if h.Memory.Chunks < 5 {
		t.Fatalf("chunks = %d, want at least 5", h.Memory.Chunks)
	}
	if !strings.Contains(h.Chunk, "zanzibar") || len(h.Chunk) >= len(text) {
		t.Fatalf("the hit's chunk should be the piece holding the match, got %d bytes", len(h.Chunk))
	}
}

func testDelete(t *testing.T, s store.Store) {
	id := add(t, s, "default", "a memory about penguins", store.Metadata{Tags: []string{"birds"}})
	keep := add(t, s, "default", "another memory about penguins", store.Metadata{})
	if err := s.Delete(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(context.Background(), id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after Delete = %v, want ErrNotFound", err)
	}
	if got := ids(search(t, s, "default", "penguins", store.Filters{}, 10)); !slices.Equal(got, []string{keep}) {
		t.Fatalf("search after delete = %v, want [%s]", got, keep)
	}
	if got := search(t, s, "default", "penguins", store.Filters{Tags: []string{"birds"}}, 10); len(got) != 0 {
		t.Fatalf("the deleted memory's tags still match: %v", ids(got))
	}
	if err := s.Delete(context.Background(), id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second Delete = %v, want ErrNotFound", err)
	}
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Memories != 1 || st.Chunks != 1 {
		t.Fatalf("stats after delete = %+v, want 1 memory and 1 chunk", st)
	}
}

func day(d int) time.Time { return time.Date(2025, 1, d, 12, 0, 0, 0, time.UTC) }

func testFilters(t *testing.T, s store.Store) {
	a := add(t, s, "default", "kiwi report one", store.Metadata{Source: "mail", Tags: []string{"fruit", "green"}, Time: day(1)})
	b := add(t, s, "default", "kiwi report two", store.Metadata{Source: "chat", Tags: []string{"fruit"}, Time: day(10)})
	c := add(t, s, "default", "kiwi report three", store.Metadata{Source: "mail", Tags: []string{"green"}, Time: day(20)})
	tests := []struct {
		name string
		f    store.Filters
		want []string
	}{
		{"none", store.Filters{}, []string{a, b, c}},
		{"source", store.Filters{Source: "mail"}, []string{a, c}},
		{"one tag", store.Filters{Tags: []string{"fruit"}}, []string{a, b}},
		{"all tags", store.Filters{Tags: []string{"fruit", "green"}}, []string{a}},
		{"repeated tag", store.Filters{Tags: []string{"green", "green"}}, []string{a, c}},
		{"unknown tag", store.Filters{Tags: []string{"blue"}}, nil},
		{"from", store.Filters{From: day(10)}, []string{b, c}},
		{"to", store.Filters{To: day(10)}, []string{a, b}},
		{"range", store.Filters{From: day(2), To: day(19)}, []string{b}},
		{"everything", store.Filters{Source: "mail", Tags: []string{"green"}, From: day(5)}, []string{c}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ids(search(t, s, "default", "kiwi", tc.f, 10))
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
		})
	}
}

// A filter applied after a top-k would return nothing here: the one tagged
// memory ranks below twenty untagged ones.
func testFiltersBeforeLimit(t *testing.T, s store.Store) {
	for i := 0; i < 20; i++ {
		add(t, s, "default", "mango mango mango", store.Metadata{})
	}
	rare := add(t, s, "default", "mango and a great many other words that dilute the score of this memory a lot", store.Metadata{Tags: []string{"rare"}})
	got := ids(search(t, s, "default", "mango", store.Filters{Tags: []string{"rare"}}, 1))
	if !slices.Equal(got, []string{rare}) {
		t.Fatalf("got %v, want [%s]", got, rare)
	}
}

func testStats(t *testing.T, s store.Store) {
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Memories != 0 || st.Chunks != 0 || !st.Oldest.IsZero() {
		t.Fatalf("empty store stats = %+v", st)
	}
	add(t, s, "default", "first", store.Metadata{Time: day(3)})
	add(t, s, "other", "second", store.Metadata{Time: day(1)})
	add(t, s, "default", strings.Repeat("long text ", chunk.Size/4), store.Metadata{Time: day(9)})
	st, err = s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Memories != 3 || st.Chunks < 4 || st.Workspaces != 2 {
		t.Fatalf("stats = %+v, want 3 memories, ≥4 chunks, 2 workspaces", st)
	}
	if !st.Oldest.Equal(day(1)) || !st.Newest.Equal(day(9)) {
		t.Fatalf("oldest/newest = %v/%v, want %v/%v", st.Oldest, st.Newest, day(1), day(9))
	}
	if st.SizeBytes <= 0 {
		t.Fatalf("size = %d, want > 0", st.SizeBytes)
	}
}

func testPhraseRanking(t *testing.T, s store.Store) {
	scattered := add(t, s, "default", "the quick red fox met a brown dog near the lazy river", store.Metadata{})
	exact := add(t, s, "default", "a dog and a brown fox: the quick brown fox jumped off", store.Metadata{})
	add(t, s, "default", "nothing relevant in this memory at all", store.Metadata{})
	hits := search(t, s, "default", "quick brown fox", store.Filters{}, 10)
	if got := ids(hits); len(got) != 2 || got[0] != exact || got[1] != scattered {
		t.Fatalf("ranking = %v, want [exact %s, scattered %s]", got, exact, scattered)
	}
	if hits[0].Score <= hits[1].Score {
		t.Fatalf("scores %v ≤ %v: larger must be better", hits[0].Score, hits[1].Score)
	}
}

func testUserSyntax(t *testing.T, s store.Store) {
	const text = `config says "NEAR" and -flag (with parens) AND OR NOT c++ * done`
	target := add(t, s, "default", text, store.Metadata{})
	queries := []string{
		`"NEAR"`, `NEAR(flag parens)`, `-flag`, `(with parens)`, `AND`, `OR NOT`, `c++*`, `"unbalanced`,
		`*`, `^flag`, `flag:`, `text:flag`, `{flag}`, `NEAR/2`, `"" ""`, `'; DROP TABLE memories; --`,
		`\"\\`, `)))(((`, `-`, `+`, `:`,
	}
	for _, q := range queries {
		t.Run(q, func(t *testing.T) {
			hits, err := s.SearchLexical(context.Background(), store.Query{Workspace: "default", Limit: 10}, terms.Split(q))
			if err != nil {
				t.Fatalf("SearchLexical(%q): %v", q, err)
			}
			if shares(q, text) != (len(hits) == 1 && hits[0].Memory.ID == target) {
				t.Fatalf("SearchLexical(%q) = %v, want the memory holding those words", q, ids(hits))
			}
		})
	}
	if _, err := s.Get(context.Background(), target); err != nil {
		t.Fatalf("the store is damaged after hostile queries: %v", err)
	}
}

// shares reports whether query and text have a word in common.
func shares(query, text string) bool {
	in := map[string]bool{}
	for _, w := range terms.Split(text) {
		in[terms.Fold(w)] = true
	}
	for _, w := range terms.Split(query) {
		if in[terms.Fold(w)] {
			return true
		}
	}
	return false
}

func testUnicode(t *testing.T, s store.Store) {
	tests := []struct{ text, query string }{
		{"Le café de la gare", "cafe"},
		{"Le café de la gare", "CAFÉ"},
		{"Привет, мир! Как дела?", "мир"},
		{"Ünïcödé ßtraße test", "unicode"},
		{"東京 タワー に 行った", "タワー"},
		{"emoji 🔥 fire line", "🔥 fire"},
		{"Ελληνικά γράμματα", "ΕΛΛΗΝΙΚΆ"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			id := add(t, s, "unicode-"+tc.query, tc.text, store.Metadata{Tags: []string{"ünï"}})
			hits := search(t, s, "unicode-"+tc.query, tc.query, store.Filters{Tags: []string{"ünï"}}, 10)
			if len(hits) != 1 || hits[0].Memory.ID != id || hits[0].Memory.Text != tc.text {
				t.Fatalf("search %q in %q = %v, want [%s]", tc.query, tc.text, ids(hits), id)
			}
		})
	}
}

// 10 groups of 10 writers, as 10 connections of 10 requests each would be.
func testConcurrentWriters(t *testing.T, s store.Store) {
	const groups, per = 10, 10
	var mu sync.Mutex
	got := map[string]string{}
	var wg sync.WaitGroup
	errs := make(chan error, groups*per)
	for g := 0; g < groups; g++ {
		for i := 0; i < per; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				text := fmt.Sprintf("concurrent writer g%d i%d", g, i)
				id, err := s.Add(context.Background(), store.NewMemory{
					Workspace: fmt.Sprintf("ws%d", g), Text: text, Chunks: chunk.Split(text)})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				got[id] = text
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent Add: %v", err)
	}
	if len(got) != groups*per {
		t.Fatalf("%d distinct ids, want %d", len(got), groups*per)
	}
	for id, text := range got {
		m, err := s.Get(context.Background(), id)
		if err != nil || m.Text != text {
			t.Fatalf("Get(%s) = %q, %v; want %q", id, m.Text, err, text)
		}
	}
	for g := 0; g < groups; g++ {
		if n := len(search(t, s, fmt.Sprintf("ws%d", g), "concurrent writer", store.Filters{}, 100)); n != per {
			t.Fatalf("workspace ws%d has %d searchable memories, want %d", g, n, per)
		}
	}
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Memories != groups*per {
		t.Fatalf("stats count %d memories, want %d", st.Memories, groups*per)
	}
}

func testWorkspaces(t *testing.T, s store.Store) {
	a := add(t, s, "alpha", "shared words in both workspaces", store.Metadata{Tags: []string{"t"}})
	b := add(t, s, "beta", "shared words in both workspaces", store.Metadata{Tags: []string{"t"}})
	for _, tc := range []struct{ ws, want string }{{"alpha", a}, {"beta", b}} {
		got := ids(search(t, s, tc.ws, "shared words", store.Filters{Tags: []string{"t"}}, 10))
		if !slices.Equal(got, []string{tc.want}) {
			t.Fatalf("workspace %s sees %v, want [%s]", tc.ws, got, tc.want)
		}
	}
	if got := search(t, s, "default", "shared words", store.Filters{}, 10); len(got) != 0 {
		t.Fatalf("default workspace sees %v, want nothing", ids(got))
	}
	vecQ := store.Query{Workspace: "gamma", Limit: 10}
	if _, err := s.Add(context.Background(), store.NewMemory{Workspace: "delta", Text: "v", Chunks: []string{"v"},
		Vectors: [][]float32{{1, 0}}, Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if hits, err := s.SearchVector(context.Background(), vecQ, []float32{1, 0}, "m"); err != nil || len(hits) != 0 {
		t.Fatalf("vector search crossed workspaces: %v, %v", ids(hits), err)
	}
}

func addVec(t *testing.T, s store.Store, text string, vec []float32, md store.Metadata) string {
	t.Helper()
	id, err := s.Add(context.Background(), store.NewMemory{Workspace: "default", Text: text, Metadata: md,
		Chunks: []string{text}, Vectors: [][]float32{vec}, Model: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func testVectors(t *testing.T, s store.Store) {
	north := addVec(t, s, "north", []float32{0, 1, 0}, store.Metadata{Tags: []string{"dir"}})
	east := addVec(t, s, "east", []float32{1, 0, 0}, store.Metadata{})
	ne := addVec(t, s, "north-east", []float32{1, 1, 0}, store.Metadata{Tags: []string{"dir"}})
	// Another dimension and another model are ignored, not an error.
	if _, err := s.Add(context.Background(), store.NewMemory{Workspace: "default", Text: "odd", Chunks: []string{"odd"},
		Vectors: [][]float32{{1, 1, 1, 1}}, Model: "m1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(context.Background(), store.NewMemory{Workspace: "default", Text: "other model", Chunks: []string{"x"},
		Vectors: [][]float32{{0, 1, 0}}, Model: "m2"}); err != nil {
		t.Fatal(err)
	}
	q := store.Query{Workspace: "default", Limit: 10}
	hits, err := s.SearchVector(context.Background(), q, []float32{0.1, 1, 0}, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(hits); !slices.Equal(got, []string{north, ne, east}) {
		t.Fatalf("vector ranking = %v, want [north %s, north-east %s, east %s]", got, north, ne, east)
	}
	if hits[0].Score <= hits[1].Score || hits[0].Score > 1.0001 {
		t.Fatalf("scores %v, %v: want cosine similarity, larger better", hits[0].Score, hits[1].Score)
	}
	q.Filters.Tags = []string{"dir"}
	q.Limit = 1
	hits, err = s.SearchVector(context.Background(), q, []float32{1, 0, 0}, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(hits); !slices.Equal(got, []string{ne}) {
		t.Fatalf("filtered vector ranking = %v, want [%s]", got, ne)
	}
}

func testPendingVectors(t *testing.T, s store.Store) {
	ctx := context.Background()
	id := add(t, s, "default", "waiting for a vector", store.Metadata{})
	addVec(t, s, "already embedded", []float32{1, 0}, store.Metadata{})
	p, err := s.Pending(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 1 || p[0].Text != "waiting for a vector" {
		t.Fatalf("pending = %+v, want the one chunk without vector", p)
	}
	if err := s.SetVectors(ctx, "m1", []store.ChunkVector{{ChunkID: p[0].ID, Vector: []float32{0, 1}}}); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Pending(ctx, 10); err != nil || len(p) != 0 {
		t.Fatalf("pending after SetVectors = %+v, %v", p, err)
	}
	hits, err := s.SearchVector(ctx, store.Query{Workspace: "default", Limit: 1}, []float32{0, 1}, "m1")
	if err != nil || len(hits) != 1 || hits[0].Memory.ID != id {
		t.Fatalf("late-embedded memory not found by vector: %v, %v", ids(hits), err)
	}
	n, err := s.ForgetVectorsNotFrom(ctx, "m2")
	if err != nil || n != 2 {
		t.Fatalf("ForgetVectorsNotFrom = %d, %v; want 2", n, err)
	}
	if p, err := s.Pending(ctx, 10); err != nil || len(p) != 2 {
		t.Fatalf("pending after a model change = %d, %v; want 2", len(p), err)
	}
	st, err := s.Stats(ctx)
	if err != nil || st.Pending != 2 {
		t.Fatalf("stats pending = %d, %v; want 2", st.Pending, err)
	}
}

func testClosed(t *testing.T, s store.Store) {
	id := add(t, s, "default", "before close", store.Metadata{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	checks := map[string]error{}
	_, checks["Add"] = s.Add(ctx, store.NewMemory{Workspace: "default", Text: "x", Chunks: []string{"x"}})
	_, checks["Get"] = s.Get(ctx, id)
	checks["Delete"] = s.Delete(ctx, id)
	_, checks["SearchLexical"] = s.SearchLexical(ctx, store.Query{Workspace: "default", Limit: 1}, []string{"close"})
	_, checks["Stats"] = s.Stats(ctx)
	for op, err := range checks {
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s after Close = %v, want ErrUnavailable", op, err)
		}
	}
}
