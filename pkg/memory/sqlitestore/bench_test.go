package sqlitestore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/memory/chunk"
	"github.com/hearth-mcp/hearth/pkg/memory/sqlitestore"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/memory/terms"
)

// corpus generates a deterministic synthetic corpus: pseudo-words drawn from a
// Zipf distribution (as word frequencies in text are), memories of 20-80
// words, a few tags, sources and two years of timestamps.
type corpus struct {
	r    *rand.Rand
	zipf *rand.Zipf
}

const vocabulary = 50_000

func newCorpus(seed uint64) *corpus {
	r := rand.New(rand.NewPCG(seed, 42))
	return &corpus{r: r, zipf: rand.NewZipf(r, 1.1, 2, vocabulary-1)}
}

var syllables = []string{"ka", "lo", "mi", "ne", "tu", "ra", "shi", "po", "ve", "do", "zu", "fe", "gi", "ha", "ju", "bo"}

// word i is a pronounceable pseudo-word unique to i.
func word(i uint64) string {
	var b strings.Builder
	for {
		b.WriteString(syllables[i%16])
		i /= 16
		if i == 0 {
			return b.String()
		}
	}
}

func (c *corpus) words(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = word(c.zipf.Uint64())
	}
	return strings.Join(ws, " ")
}

func (c *corpus) memory() store.NewMemory {
	text := c.words(20 + c.r.IntN(61))
	return store.NewMemory{
		Workspace: "default",
		Text:      text,
		Chunks:    chunk.Split(text),
		Metadata: store.Metadata{
			Source: fmt.Sprintf("source-%d", c.r.IntN(5)),
			Tags:   []string{fmt.Sprintf("tag-%d", c.r.IntN(10))},
			Time:   time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(c.r.Int64N(2 * 365 * 24 * int64(time.Hour)))),
		},
	}
}

// fill adds n corpus memories with 16 concurrent writers (group commit).
func fill(b *testing.B, s store.Store, n int) {
	c := newCorpus(1)
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
		jobs <- c.memory()
	}
	close(jobs)
	wg.Wait()
	if err := failed.Load(); err != nil {
		b.Fatal(err)
	}
}

func openBench(b *testing.B) *sqlitestore.Store {
	s, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "memory.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkAddSequential: one client adding one memory at a time, each
// answered only after its own durable commit (one fsync per add).
func BenchmarkAddSequential(b *testing.B) {
	s := openBench(b)
	c := newCorpus(2)
	start := time.Now()
	n := 0
	for b.Loop() {
		if _, err := s.Add(context.Background(), c.memory()); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "adds/s")
}

// BenchmarkAddConcurrent: many clients adding at once; each add is still
// answered only after a durable commit, but commits are shared (group commit),
// so throughput grows with the number of clients waiting.
func BenchmarkAddConcurrent(b *testing.B) {
	for _, perCPU := range []int{8, 32} {
		b.Run(fmt.Sprintf("clients=%d", perCPU*runtime.GOMAXPROCS(0)), func(b *testing.B) {
			s := openBench(b)
			var seed atomic.Uint64
			b.SetParallelism(perCPU)
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				c := newCorpus(100 + seed.Add(1))
				for pb.Next() {
					if _, err := s.Add(context.Background(), c.memory()); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "adds/s")
		})
	}
}

func BenchmarkSearch10k(b *testing.B)  { benchSearch(b, 10_000) }
func BenchmarkSearch100k(b *testing.B) { benchSearch(b, 100_000) }

// BenchmarkSearch1M builds a million memories first, which takes minutes:
// set HEARTH_BENCH_1M=1 to run it.
func BenchmarkSearch1M(b *testing.B) {
	if os.Getenv("HEARTH_BENCH_1M") == "" {
		b.Skip("set HEARTH_BENCH_1M=1 to build and search a 1M-memory store")
	}
	benchSearch(b, 1_000_000)
}

// benchSearch fills a store with n memories, then runs lexical searches of 1-3
// words drawn from the corpus distribution (limit 10), half of them with a
// tag filter, and reports the latency quantiles.
func benchSearch(b *testing.B, n int) {
	s := openBench(b)
	t0 := time.Now()
	fill(b, s, n)
	build := time.Since(t0)
	qc := newCorpus(3)
	queries := make([]string, 1000)
	for i := range queries {
		queries[i] = qc.words(1 + i%3)
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		q := store.Query{Workspace: "default", Limit: 10}
		if i%2 == 1 {
			q.Filters.Tags = []string{fmt.Sprintf("tag-%d", i%10)}
		}
		start := time.Now()
		if _, err := s.SearchLexical(context.Background(), q, terms.Split(queries[i%len(queries)])); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
	b.ReportMetric(build.Seconds(), "build-s")
	b.ReportMetric(0, "ns/op") // the quantiles say it better than a mean
}
