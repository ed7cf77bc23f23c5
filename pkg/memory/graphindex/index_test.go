package graphindex

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// TestLowerAsJavaScript: the cases where JavaScript's toLowerCase differs
// from strings.ToLower (values from node: "İ".toLowerCase(), ...).
func TestLowerAsJavaScript(t *testing.T) {
	for in, want := range map[string]string{
		"ABC xyz":    "abc xyz",
		"İstanbul":   "i\u0307stanbul",
		"ΟΔΟΣ":       "οδος",
		"ΟΔΟΣ ΚΑΙ":   "οδος και",
		"ΣΑ":         "σα",
		"Σ":          "σ",
		"ΑΣ.":        "ας.",
		"STRASSE ẞ":  "strasse ß",
		"Ünïcödé ÀÉ": "ünïcödé àé",
	} {
		if got := Lower(in); got != want {
			t.Errorf("Lower(%q) = %q, want %q", in, got, want)
		}
	}
}

func row(key int64, name string) EntityRow { return EntityRow{Key: key, Name: name, Type: "t"} }

// TestPageBytes: a page stops near MaxPageBytes, and always holds one item.
func TestPageBytes(t *testing.T) {
	ix := New()
	big := strings.Repeat("x", MaxPageBytes/3)
	c := &Change{Workspace: "w"}
	for i := int64(1); i <= 5; i++ {
		c.NewEntities = append(c.NewEntities, row(i, fmt.Sprint("e", i)))
		c.NewObservations = append(c.NewObservations, ObservationRow{Entity: i, Key: i, Text: big})
	}
	ix.Apply(c)
	var sizes []int
	cur := ""
	for {
		p, err := ix.Page("w", cur, 1000)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(p.Entities))
		if cur = p.Next; cur == "" {
			break
		}
	}
	if fmt.Sprint(sizes) != "[2 2 1]" {
		t.Fatalf("page sizes %v, want [2 2 1]", sizes)
	}
	huge := &Change{Workspace: "h", NewEntities: []EntityRow{row(1, "h")}, NewObservations: []ObservationRow{{Entity: 1, Key: 1, Text: strings.Repeat("y", 2*MaxPageBytes)}}}
	ix.Apply(huge)
	if p, _ := ix.Page("h", "", 10); len(p.Entities) != 1 || p.Next != "" {
		t.Fatalf("an entity over the page's bytes still reads: %d %q", len(p.Entities), p.Next)
	}
}

// TestRelatedHub: a walk through a hub stops at MaxWalk relations and says so.
func TestRelatedHub(t *testing.T) {
	ix := New()
	c := &Change{Workspace: "w"}
	for i := int64(0); i < MaxWalk+10; i++ {
		c.NewRelations = append(c.NewRelations, RelationRow{Key: i + 1, From: "hub", To: fmt.Sprint("n", i), Type: "r"})
	}
	c.NewRelations = append(c.NewRelations, RelationRow{Key: MaxWalk + 20, From: "start", To: "hub", Type: "r"})
	ix.Apply(c)
	out, truncated, ok := ix.Related(store.RelatedQuery{Workspace: "w", Name: "start", Depth: 2, Direction: store.Both, Limit: 5})
	if !ok || !truncated || len(out) != 5 || out[0].Name != "hub" || out[0].Exists {
		t.Fatalf("hub walk: ok %v truncated %v %+v", ok, truncated, out)
	}
}

// TestCompaction: deleting most entities and relations compacts the slices
// and keeps reads right.
func TestCompaction(t *testing.T) {
	ix := New()
	c := &Change{Workspace: "w"}
	for i := int64(1); i <= 1000; i++ {
		c.NewEntities = append(c.NewEntities, row(i, fmt.Sprint("e", i)))
		c.NewRelations = append(c.NewRelations, RelationRow{Key: i, From: fmt.Sprint("e", i), To: "e1", Type: "r"})
	}
	ix.Apply(c)
	gone := &Change{Workspace: "w"}
	for i := int64(2); i <= 1000; i++ {
		if i%10 != 0 {
			gone.GoneEntities = append(gone.GoneEntities, i)
			gone.GoneRelations = append(gone.GoneRelations, i)
		}
	}
	ix.Apply(gone)
	g := ix.ws["w"]
	if len(g.ents) != 101 || len(g.rels) != 101 {
		t.Fatalf("not compacted: %d entities, %d relations held", len(g.ents), len(g.rels))
	}
	p, err := ix.Page("w", "", 10000)
	if err != nil || len(p.Entities) != 101 || len(p.Relations) != 101 || p.Entities[1].Name != "e10" {
		t.Fatalf("after compaction: %d %d %v", len(p.Entities), len(p.Relations), err)
	}
	if res := ix.Search("w", "e5", 0); len(res.Entities) != 11 { // e50 and e500 ... e590 contain "e5"
		t.Fatalf("search after compaction: %d", len(res.Entities))
	}
	if ix.Counts("w") != (Counts{Entities: 101, Relations: 101}) {
		t.Fatalf("counts %+v", ix.Counts("w"))
	}
}

// TestConcurrentReadsAndWrites: searches, pages and walks beside changes
// (the race detector's case); every search finds the entity it names.
func TestConcurrentReadsAndWrites(t *testing.T) {
	ix := New()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := int64(1); i <= 300; i++ {
			ix.Apply(&Change{Workspace: "w", NewEntities: []EntityRow{row(i, fmt.Sprint("e", i))},
				NewObservations: []ObservationRow{{Entity: i, Key: i, Text: fmt.Sprint("observation ", i)}},
				NewRelations:    []RelationRow{{Key: i, From: fmt.Sprint("e", i), To: "e1", Type: "r"}}})
			if i%3 == 0 {
				ix.Apply(&Change{Workspace: "w", GoneEntities: []int64{i - 1}})
			}
		}
	}()
	for k := 0; ; k++ {
		select {
		case <-done:
			if res := ix.Search("w", "e300", 0); len(res.Entities) != 1 || res.Entities[0].Name != "e300" {
				t.Fatalf("search e300: %+v", res.Entities)
			}
			return
		default:
		}
		res := ix.Search("w", "observation", 5)
		if len(res.Entities) > 5 {
			t.Fatalf("limit 5: %d", len(res.Entities))
		}
		ix.Page("w", "", 50)
		ix.Related(store.RelatedQuery{Workspace: "w", Name: "e1", Depth: 2, Direction: store.Both})
	}
}
