package lexindex

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/memory/internal/synth"
	"github.com/hearth-mcp/hearth/pkg/memory/terms"
)

// BenchmarkIndex: the index alone (no database) over n corpus memories: the
// time to add them all, the heap they hold, and the latency of the store
// benchmark's queries (limit 10; half with a tag filter, multi-word queries
// ranking the store's candidate count).
func BenchmarkIndex(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if os.Getenv("HEARTH_BENCH_1M") != "" {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			c := synth.New(1)
			ix := New()
			t0 := time.Now()
			for i := 0; i < n; i++ {
				m := c.Memory()
				ix.Add(Memory{Key: int64(i), Workspace: "default", Source: m.Source, Tags: m.Tags, Time: m.Time.UnixMilli()},
					[]Chunk{{Key: int64(i), Text: m.Text}})
			}
			build := time.Since(t0)
			runtime.GC()
			runtime.ReadMemStats(&after)
			queries := synth.Queries(1000)
			split := make([][]string, len(queries))
			for i, q := range queries {
				split[i] = terms.Split(q)
			}
			var lat []time.Duration
			i := 0
			for b.Loop() {
				f := Filter{Workspace: "default"}
				if i%2 == 1 {
					f.Tags = []string{fmt.Sprintf("tag-%d", i%10)}
				}
				words := split[i%len(split)]
				k := 10
				if len(words) > 1 {
					k = 20 // sqlitestore's candidates(10)
				}
				start := time.Now()
				ix.Search(words, f, k)
				lat = append(lat, time.Since(start))
				i++
			}
			synth.ReportLatency(b, lat)
			b.ReportMetric(build.Seconds(), "build-s")
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MB")
		})
	}
}
