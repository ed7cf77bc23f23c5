package rank

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/memory/lexindex"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// TestLoadGroupsChunks: chunks fed one at a time, over several batches,
// reach the index as whole memories, each with every one of its chunks.
func TestLoadGroupsChunks(t *testing.T) {
	const memories = 3*loadBatch + 7
	ix, err := Load(func(f *Feed) error {
		key := int64(0)
		for m := int64(1); m <= memories; m++ {
			for j := range 1 + m%3 {
				key++
				c := lexindex.Chunk{Key: key, Text: fmt.Sprintf("memory%d part%d", m, j)}
				if !f.Chunk(m, c) {
					f.Memory(lexindex.Memory{Key: m, Workspace: "w", Tags: []string{"t"}}, c)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []int64{1, loadBatch, loadBatch + 1, memories} {
		r := ix.Search([]string{fmt.Sprintf("memory%d", m), fmt.Sprintf("part%d", m%3)}, lexindex.Filter{Workspace: "w", Tags: []string{"t"}}, 1)
		if len(r.Results) != 1 || r.Results[0].Memory != m {
			t.Errorf("memory %d: got %+v", m, r.Results)
		}
	}
}

func TestLoadReturnsReadError(t *testing.T) {
	boom := errors.New("boom")
	ix, err := Load(func(f *Feed) error {
		f.Memory(lexindex.Memory{Key: 1}, lexindex.Chunk{Key: 1, Text: "x"})
		return boom
	})
	if ix != nil || !errors.Is(err, boom) {
		t.Fatalf("Load = %v, %v; want nil, %v", ix, err, boom)
	}
}

// TestSearchSkipsDeletedAndStopsAtLimit: a ranked chunk the engine no
// longer has is skipped, and no more than the limit is returned.
func TestSearchSkipsDeletedAndStopsAtLimit(t *testing.T) {
	ix := lexindex.New()
	texts := map[int64]string{1: "alpha", 2: "alpha alpha", 3: "alpha alpha alpha"}
	for k := int64(1); k <= 3; k++ {
		ix.Add(lexindex.Memory{Key: k, Workspace: "w"}, []lexindex.Chunk{{Key: k, Text: texts[k]}})
	}
	var asked []int64
	read := func(rs []lexindex.Result) (map[int64]store.Hit, error) {
		out := map[int64]store.Hit{}
		for _, r := range rs {
			asked = append(asked, r.Chunk)
			if r.Chunk != 3 { // deleted after the index ranked it
				out[r.Chunk] = store.Hit{Memory: store.Memory{ID: fmt.Sprint(r.Chunk)}, Chunk: texts[r.Chunk]}
			}
		}
		return out, nil
	}
	hits, err := Search(ix, store.Query{Workspace: "w", Limit: 1}, []string{"alpha"}, read)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 0 || !slices.Equal(asked, []int64{3}) {
		t.Fatalf("limit 1: hits %+v after reading %v; want none after reading [3]", hits, asked)
	}
	asked = nil
	hits, err = Search(ix, store.Query{Workspace: "w", Limit: 2}, []string{"alpha"}, read)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Memory.ID != "2" || hits[0].Score <= 0 {
		t.Fatalf("limit 2: hits %+v; want memory 2 alone, scored", hits)
	}
	boom := errors.New("boom")
	if _, err := Search(ix, store.Query{Workspace: "w", Limit: 2}, []string{"alpha"},
		func([]lexindex.Result) (map[int64]store.Hit, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("read error: got %v", err)
	}
}

func TestFilter(t *testing.T) {
	from, to := time.UnixMilli(1000), time.UnixMilli(2000)
	got := Filter(store.Query{Workspace: "w", Filters: store.Filters{Tags: []string{"a", "b", "a"}, Source: "s", From: from, To: to}})
	want := lexindex.Filter{Workspace: "w", Source: "s", Tags: []string{"a", "b"}, From: 1000, To: 2000, HasFrom: true, HasTo: true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Filter = %+v, want %+v", got, want)
	}
	if got := Filter(store.Query{Workspace: "w"}); got.HasFrom || got.HasTo || got.Tags != nil {
		t.Fatalf("empty filters: %+v", got)
	}
}
