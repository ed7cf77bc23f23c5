package lexindex

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/memory/terms"
)

// model is the index's input kept plainly, for a brute-force ranking.
type model struct {
	mems   []Memory
	chunks [][]Chunk
	tfs    [][]map[string]int // term frequencies of each chunk
	dead   map[int64]bool
}

func (m *model) add(ix *Index, mem Memory, chunks []Chunk) {
	ix.Add(mem, chunks)
	m.mems = append(m.mems, mem)
	m.chunks = append(m.chunks, chunks)
	var tfs []map[string]int
	for _, c := range chunks {
		tf := map[string]int{}
		terms.Tokens(c.Text, func(t string) { tf[strings.Clone(t)]++ })
		tfs = append(tfs, tf)
	}
	m.tfs = append(m.tfs, tfs)
}

func passesPlain(m Memory, f Filter) bool {
	if m.Workspace != f.Workspace || (f.Source != "" && m.Source != f.Source) {
		return false
	}
	if (f.HasFrom && m.Time < f.From) || (f.HasTo && m.Time > f.To) {
		return false
	}
	for _, t := range f.Tags {
		if !slices.Contains(m.Tags, t) {
			return false
		}
	}
	return true
}

// bruteForce scores every live chunk that passes f with the index's own
// statistics and returns each memory's best score, best first.
func (m *model) bruteForce(ix *Index, words []string, f Filter) []Result {
	n := float64(ix.liveDocs)
	avgdl := float64(ix.liveLen) / n
	sc := scorer{c0: k1 * (1 - b), c1: k1 * b / max(avgdl, 1)}
	idf := map[string]float64{}
	for _, w := range words {
		fw := terms.Fold(w)
		if id, ok := ix.termIDs[fw]; ok {
			df := min(float64(len(ix.lists[id].docs)), n)
			idf[fw] = math.Log(1 + (n-df+0.5)/(df+0.5))
		}
	}
	var out []Result
	doc := uint32(0)
	for i, mem := range m.mems {
		best := Result{Score: -1}
		for j, c := range m.chunks[i] {
			tf, dl := m.tfs[i][j], 0
			for _, n := range tf {
				dl += n
			}
			s := 0.0
			for t, w := range idf {
				if tf[t] > 0 {
					s += sc.score(w, uint8(min(tf[t], 255)), uint16(dl))
				}
			}
			if s > 0 && better(Result{Score: s, doc: doc}, best) {
				best = Result{Memory: mem.Key, Chunk: c.Key, Score: s, doc: doc}
			}
			doc++
		}
		if best.Score > 0 && !m.dead[mem.Key] && passesPlain(mem, f) {
			out = append(out, best)
		}
	}
	sortResults(out)
	return out
}

func randomText(r *rand.Rand, z *rand.Zipf, words int) string {
	ws := make([]string, words)
	for i := range ws {
		ws[i] = fmt.Sprintf("w%d", z.Uint64())
		if r.IntN(20) == 0 {
			ws[i] = strings.ToUpper(ws[i]) // folded alike
		}
	}
	return strings.Join(ws, " ")
}

// TestSearchMatchesBruteForce: the pruned search returns exactly the k best
// memories a full scoring finds, under random filters, deletes and limits.
func TestSearchMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	z := rand.NewZipf(r, 1.2, 1, 2000)
	ix, m := New(), &model{dead: map[int64]bool{}}
	key := int64(1)
	for i := 0; i < 3000; i++ {
		mem := Memory{Key: key, Workspace: []string{"default", "other"}[r.IntN(5)/4],
			Source: fmt.Sprintf("s%d", r.IntN(3)), Time: int64(r.IntN(1000))}
		for j := 0; j < r.IntN(3); j++ {
			mem.Tags = append(mem.Tags, fmt.Sprintf("t%d", r.IntN(4)))
		}
		key++
		var chunks []Chunk
		for j := 0; j < 1+r.IntN(3)/2; j++ {
			chunks = append(chunks, Chunk{Key: key, Text: randomText(r, z, 5+r.IntN(60))})
			key++
		}
		m.add(ix, mem, chunks)
	}
	for i := 0; i < 300; i++ {
		k := m.mems[r.IntN(len(m.mems))].Key
		if ix.Delete(k) != !m.dead[k] {
			t.Fatalf("Delete(%d) disagrees with the model", k)
		}
		m.dead[k] = true
	}
	defer func(old int) { parallelMin = old }(parallelMin)
	for q := 0; q < 400; q++ {
		// Half the queries take the parallel path (ranges split across cores).
		parallelMin = map[bool]int{true: 0, false: 1 << 30}[q%2 == 0]
		var words []string
		for j := 0; j < 1+r.IntN(4); j++ {
			words = append(words, fmt.Sprintf("w%d", z.Uint64()))
		}
		f := Filter{Workspace: "default"}
		switch r.IntN(5) {
		case 1:
			f.Tags = []string{fmt.Sprintf("t%d", r.IntN(4))}
		case 2:
			f.Source = "s1"
		case 3:
			f.From, f.To, f.HasFrom, f.HasTo = 200, 700, true, true
		case 4:
			f.Workspace = "other"
		}
		k := []int{1, 3, 10, 50}[r.IntN(4)]
		got := ix.Search(words, f, k).Results
		all := m.bruteForce(ix, words, f)
		want := all[:min(k, len(all))]
		if len(got) != len(want) {
			t.Fatalf("query %v %+v k=%d: %d results, want %d", words, f, k, len(got), len(want))
		}
		for i := range got {
			// Scores summed in another order may differ in the last bits, so
			// equal-scored memories may swap: compare scores by rank, and each
			// returned memory's score with its true score.
			if math.Abs(got[i].Score-want[i].Score) > 1e-9 {
				t.Fatalf("query %v %+v k=%d rank %d: score %v, want %v", words, f, k, i, got[i].Score, want[i].Score)
			}
			j := slices.IndexFunc(all, func(x Result) bool { return x.Memory == got[i].Memory })
			if j < 0 || math.Abs(all[j].Score-got[i].Score) > 1e-9 {
				t.Fatalf("query %v: memory %d returned with score %v, its true best is %+v", words, got[i].Memory, got[i].Score, j)
			}
		}
	}
}

func TestFiltersAndDeletes(t *testing.T) {
	ix := New()
	ix.Add(Memory{Key: 1, Workspace: "w", Source: "a", Tags: []string{"x", "y"}, Time: 10}, []Chunk{{Key: 1, Text: "alpha beta"}})
	ix.Add(Memory{Key: 2, Workspace: "w", Source: "b", Tags: []string{"x"}, Time: 20}, []Chunk{{Key: 2, Text: "alpha gamma"}, {Key: 3, Text: "alpha alpha"}})
	ix.Add(Memory{Key: 5, Workspace: "v", Source: "a", Time: 30}, []Chunk{{Key: 4, Text: "alpha"}})
	keys := func(r *Ranking) []int64 {
		var out []int64
		for _, x := range r.Results {
			out = append(out, x.Memory)
		}
		slices.Sort(out)
		return out
	}
	tests := []struct {
		f    Filter
		want []int64
	}{
		{Filter{Workspace: "w"}, []int64{1, 2}},
		{Filter{Workspace: "v"}, []int64{5}},
		{Filter{Workspace: "none"}, nil},
		{Filter{Workspace: "w", Source: "b"}, []int64{2}},
		{Filter{Workspace: "w", Source: "zzz"}, nil},
		{Filter{Workspace: "w", Tags: []string{"x", "y"}}, []int64{1}},
		{Filter{Workspace: "w", Tags: []string{"x"}}, []int64{1, 2}},
		{Filter{Workspace: "w", Tags: []string{"nope"}}, nil},
		{Filter{Workspace: "w", From: 15, HasFrom: true}, []int64{2}},
		{Filter{Workspace: "w", To: 15, HasTo: true}, []int64{1}},
		{Filter{Workspace: "w", From: 10, To: 10, HasFrom: true, HasTo: true}, []int64{1}},
	}
	for _, tc := range tests {
		if got := keys(ix.Search([]string{"ALPHA"}, tc.f, 10)); !slices.Equal(got, tc.want) {
			t.Errorf("filter %+v: %v, want %v", tc.f, got, tc.want)
		}
	}
	// Memory 2 scores as its best chunk (3, "alpha alpha") and appears once.
	r := ix.Search([]string{"alpha"}, Filter{Workspace: "w"}, 10)
	if len(r.Results) != 2 || r.Results[0].Memory != 2 || r.Results[0].Chunk != 3 {
		t.Fatalf("best chunk should speak for memory 2: %+v", r.Results)
	}
	if !ix.Delete(2) || ix.Delete(2) || ix.Delete(3) {
		t.Fatal("Delete must report whether it removed an indexed memory")
	}
	if got := keys(ix.Search([]string{"alpha"}, Filter{Workspace: "w"}, 10)); !slices.Equal(got, []int64{1}) {
		t.Fatalf("after delete: %v", got)
	}
	if docs := ix.liveDocs; docs != 2 {
		t.Fatalf("live chunks = %d, want 2", docs)
	}
	// The database may reuse the row id of a deleted memory.
	if !ix.Delete(5) {
		t.Fatal("Delete(5) missed")
	}
	ix.Add(Memory{Key: 5, Workspace: "v", Time: 40}, []Chunk{{Key: 5, Text: "alpha again"}})
	if r := ix.Search([]string{"again"}, Filter{Workspace: "v"}, 10); len(r.Results) != 1 {
		t.Fatalf("the memory with the reused key is not found: %+v", r.Results)
	}
	if !ix.Delete(5) || ix.Delete(5) {
		t.Fatal("Delete of a reused key must take the live memory, once")
	}
	if r := ix.Search([]string{"alpha"}, Filter{Workspace: "v"}, 10); len(r.Results) != 0 {
		t.Fatalf("deleted memories returned: %+v", r.Results)
	}
	if r := ix.Search([]string{"unknownword"}, Filter{Workspace: "w"}, 10); len(r.Results) != 0 {
		t.Fatalf("unknown word matched %+v", r.Results)
	}
	if r := ix.Search(nil, Filter{Workspace: "w"}, 10); len(r.Results) != 0 {
		t.Fatal("no words must match nothing")
	}
}

func TestRerankPhrase(t *testing.T) {
	ix := New()
	texts := map[int64]string{
		1: "the quick red fox met a brown dog near the lazy river",
		2: "a dog and a brown fox: the Quick Brown Fox jumped off",
		3: "fox brown quick in the wrong order, quick fox, brown",
	}
	for k := int64(1); k <= 3; k++ {
		ix.Add(Memory{Key: k, Workspace: "w"}, []Chunk{{Key: k, Text: texts[k]}})
	}
	r := ix.Search(terms.Split("quick brown fox"), Filter{Workspace: "w"}, 10)
	r.Rerank(func(k int64) (string, bool) { t, ok := texts[k]; return t, ok })
	if len(r.Results) != 3 || r.Results[0].Memory != 2 {
		t.Fatalf("the exact phrase should rank first: %+v", r.Results)
	}
	for _, tc := range []struct {
		text   string
		phrase []string
		want   bool
	}{
		{"a b c", []string{"b", "c"}, true},
		{"a b a b c", []string{"a", "b", "c"}, true},
		{"a b x c", []string{"b", "c"}, false},
		{"B, C!", []string{"b", "c"}, true},
		{"b", []string{"b", "c"}, false},
	} {
		if got := holdsPhrase(tc.text, tc.phrase); got != tc.want {
			t.Errorf("holdsPhrase(%q, %q) = %v", tc.text, tc.phrase, got)
		}
	}
}

// TestConcurrentAddSearch runs under -race: searches read while adds write.
func TestConcurrentAddSearch(t *testing.T) {
	ix := New()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := int64(1); i <= 2000; i++ {
			ix.Add(Memory{Key: i, Workspace: "w"}, []Chunk{{Key: i, Text: fmt.Sprintf("common word%d", i%50)}})
			if i%10 == 0 {
				ix.Delete(i - 5)
			}
		}
	}()
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				for _, r := range ix.Search([]string{"common", fmt.Sprintf("word%d", i%50)}, Filter{Workspace: "w"}, 10).Results {
					if r.Score <= 0 {
						t.Errorf("non-positive score %v", r.Score)
					}
				}
			}
		}()
	}
	wg.Wait()
}
