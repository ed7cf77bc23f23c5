package rank

import "github.com/hearth-mcp/hearth/pkg/memory/lexindex"

// Load builds the index from a store's chunks, which read hands to the Feed:
// every chunk with its memory, in ascending chunk key order (the order the
// index requires; a memory's chunks have consecutive keys). Reading (the
// engine's work) and indexing (the index's) run in two goroutines, a batch
// of memories apart. read's error is returned as it is.
func Load(read func(*Feed) error) (*lexindex.Index, error) {
	ix := lexindex.New()
	batches := make(chan []loaded, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for batch := range batches {
			for _, l := range batch {
				ix.Add(l.mem, l.chunks)
			}
		}
	}()
	f := &Feed{out: batches, batch: make([]loaded, 0, loadBatch)}
	err := read(f)
	if err == nil {
		batches <- f.batch
	}
	close(batches)
	<-done
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// loaded is one memory as read for the index.
type loaded struct {
	mem    lexindex.Memory
	chunks []lexindex.Chunk
}

const loadBatch = 512

// Feed takes a store's chunks for Load, one at a time, and groups them into
// memories and the memories into batches. For each chunk the engine calls
// Chunk, and when that says the chunk starts a memory, Memory: so it
// decodes a memory's own columns once, not once per chunk.
type Feed struct {
	out   chan<- []loaded
	batch []loaded
}

// Chunk adds c to the memory fed last if that memory's key is mem, and
// reports whether it did. When it did not, c starts memory mem: call Memory.
func (f *Feed) Chunk(mem int64, c lexindex.Chunk) bool {
	n := len(f.batch)
	if n == 0 || f.batch[n-1].mem.Key != mem {
		return false
	}
	f.batch[n-1].chunks = append(f.batch[n-1].chunks, c)
	return true
}

// Memory starts memory m with its first chunk c.
func (f *Feed) Memory(m lexindex.Memory, c lexindex.Chunk) {
	if len(f.batch) == loadBatch {
		f.out <- f.batch
		f.batch = make([]loaded, 0, loadBatch)
	}
	f.batch = append(f.batch, loaded{mem: m, chunks: []lexindex.Chunk{c}})
}
