package sqlitestore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/memory/internal/synth"
	"github.com/hearth-mcp/hearth/pkg/memory/sqlitestore"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

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
	c := synth.New(2)
	start := time.Now()
	n := 0
	for b.Loop() {
		if _, err := s.Add(context.Background(), c.NewMemory()); err != nil {
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
				c := synth.New(100 + seed.Add(1))
				for pb.Next() {
					if _, err := s.Add(context.Background(), c.NewMemory()); err != nil {
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

// benchSearch fills a store with n memories, reopens it twice: once without
// the index snapshot (the index is rebuilt from the file: rebuild-s, the
// time from opening to the first answer) and once with it (reopen-s), then
// runs lexical searches of 1-3 words drawn from the corpus distribution
// (limit 10), half of them with a tag filter, and reports the latency
// quantiles and the heap the open store holds.
func benchSearch(b *testing.B, n int) {
	path := filepath.Join(b.TempDir(), "memory.db")
	s, err := sqlitestore.Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	synth.Fill(b, s, n)
	build := time.Since(t0)
	s.Close()
	if err := os.Remove(sqlitestore.SnapshotPath(path)); err != nil {
		b.Fatal(err)
	}
	t0 = time.Now()
	s, err = sqlitestore.Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.SearchLexical(context.Background(), store.Query{Workspace: "default", Limit: 1}, []string{"ka"}); err != nil {
		b.Fatal(err)
	}
	rebuild := time.Since(t0)
	s.Close() // saves the snapshot
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	t0 = time.Now()
	s, err = sqlitestore.Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	// The index loads in the background (here from the snapshot): the
	// first search waits for it.
	if _, err := s.SearchLexical(context.Background(), store.Query{Workspace: "default", Limit: 1}, []string{"ka"}); err != nil {
		b.Fatal(err)
	}
	reopen := time.Since(t0)
	b.Cleanup(func() { s.Close() })
	runtime.GC()
	runtime.ReadMemStats(&after)
	synth.BenchSearches(b, s)
	b.ReportMetric(build.Seconds(), "build-s")
	b.ReportMetric(reopen.Seconds(), "reopen-s")
	b.ReportMetric(rebuild.Seconds(), "rebuild-s")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "index-MB")
}
