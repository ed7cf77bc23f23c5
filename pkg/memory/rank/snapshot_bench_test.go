package rank_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/memory/chunk"
	"github.com/hearth-mcp/hearth/pkg/memory/internal/synth"
	"github.com/hearth-mcp/hearth/pkg/memory/lexindex"
	"github.com/hearth-mcp/hearth/pkg/memory/rank"
)

// BenchmarkLoadSnapshot: mapping back the snapshot of an index of 100 000
// corpus memories (HEARTH_BENCH_MEMORIES to change it), what a warm start
// pays before its first search.
func BenchmarkLoadSnapshot(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("HEARTH_BENCH_MEMORIES")); err == nil && v > 0 {
		n = v
	}
	ix := lexindex.New()
	c := synth.New(1)
	key := int64(0)
	for i := 0; i < n; i++ {
		m := c.Memory()
		key++
		mem := lexindex.Memory{Key: key, Workspace: "default", Source: m.Source, Tags: m.Tags, Time: m.Time.UnixMilli()}
		var chunks []lexindex.Chunk
		for _, t := range chunk.Split(m.Text) {
			key++
			chunks = append(chunks, lexindex.Chunk{Key: key, Text: t})
		}
		ix.Add(mem, chunks)
	}
	path := filepath.Join(b.TempDir(), "memory.index")
	if err := rank.SaveSnapshot(path, ix, rank.Stamp{Store: "bench", Seq: 1, Memory: 1}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := rank.LoadSnapshot(path); err != nil {
			b.Fatal(err)
		}
	}
}
