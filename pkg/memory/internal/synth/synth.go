// Package synth generates the deterministic synthetic memory corpus the
// benchmarks share: pseudo-words drawn from a Zipf distribution (as word
// frequencies in text are), memories of 20-80 words, a few tags, sources and
// two years of timestamps. Nothing is downloaded; a seed gives the same corpus
// on every machine.
package synth

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/memory/chunk"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/memory/terms"
)

// Vocabulary is how many distinct words the corpus draws from.
const Vocabulary = 50_000

// Corpus draws memories and queries.
type Corpus struct {
	r    *rand.Rand
	zipf *rand.Zipf
}

// New returns the corpus for seed.
func New(seed uint64) *Corpus {
	r := rand.New(rand.NewPCG(seed, 42))
	return &Corpus{r: r, zipf: rand.NewZipf(r, 1.1, 2, Vocabulary-1)}
}

var syllables = []string{"ka", "lo", "mi", "ne", "tu", "ra", "shi", "po", "ve", "do", "zu", "fe", "gi", "ha", "ju", "bo"}

// Word is the pronounceable pseudo-word unique to i.
func Word(i uint64) string {
	var b strings.Builder
	for {
		b.WriteString(syllables[i%16])
		i /= 16
		if i == 0 {
			return b.String()
		}
	}
}

// Words is n words drawn from the distribution, space-separated.
func (c *Corpus) Words(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = Word(c.zipf.Uint64())
	}
	return strings.Join(ws, " ")
}

// Memory is one memory: its text, source, tags and time.
type Memory struct {
	Text   string
	Source string
	Tags   []string
	Time   time.Time
}

// Memory draws the next memory.
func (c *Corpus) Memory() Memory {
	return Memory{
		Text:   c.Words(20 + c.r.IntN(61)),
		Source: fmt.Sprintf("source-%d", c.r.IntN(5)),
		Tags:   []string{fmt.Sprintf("tag-%d", c.r.IntN(10))},
		Time:   time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(c.r.Int64N(2 * 365 * 24 * int64(time.Hour)))),
	}
}

// Queries is the benchmark's n queries: 1-3 words from the same distribution.
func Queries(n int) []string {
	c := New(3)
	out := make([]string, n)
	for i := range out {
		out[i] = c.Words(1 + i%3)
	}
	return out
}

// Search runs the i-th search of the benchmarks' mix on s (queries from
// Queries; every other one also filtered by a tag) and returns how long it
// took.
func Search(tb testing.TB, s store.Store, queries []string, i int) time.Duration {
	q := store.Query{Workspace: "default", Limit: 10}
	if i%2 == 1 {
		q.Filters.Tags = []string{fmt.Sprintf("tag-%d", i%10)}
	}
	start := time.Now()
	if _, err := s.SearchLexical(context.Background(), q, terms.Split(queries[i%len(queries)])); err != nil {
		tb.Fatal(err)
	}
	return time.Since(start)
}

// BenchSearches is a search benchmark's loop: the mix of Search over
// Queries(1000), its latency reported as by ReportLatency.
func BenchSearches(b *testing.B, s store.Store) {
	queries := Queries(1000)
	var lat []time.Duration
	for i := 0; b.Loop(); i++ {
		lat = append(lat, Search(b, s, queries, i))
	}
	ReportLatency(b, lat)
}

// ReportLatency reports the p50 and p99 of lat in milliseconds, instead of
// the mean per op (the quantiles say it better).
func ReportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

// NewMemory is the corpus's next memory as a store takes it: in the
// default workspace, chunked as the memory family chunks.
func (c *Corpus) NewMemory() store.NewMemory {
	m := c.Memory()
	return store.NewMemory{Workspace: "default", Text: m.Text, Chunks: chunk.Split(m.Text),
		Metadata: store.Metadata{Source: m.Source, Tags: m.Tags, Time: m.Time}}
}

// Fill adds n memories of the corpus of seed 1 to s from 16 writers at once
// (their adds share commits), failing tb if any add fails.
func Fill(tb testing.TB, s store.Store, n int) {
	c := New(1)
	jobs := make(chan store.NewMemory, 256)
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range jobs {
				if _, err := s.Add(context.Background(), m); err != nil {
					failed.Store(err)
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- c.NewMemory()
	}
	close(jobs)
	wg.Wait()
	if err := failed.Load(); err != nil {
		tb.Fatal(err)
	}
}
