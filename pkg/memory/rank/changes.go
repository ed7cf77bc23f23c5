package rank

import "github.com/hearth-mcp/hearth/pkg/memory/lexindex"

// Change is one entry of an engine's change log: memory Memory was added,
// or deleted, as the store's change number Seq. Engines number their
// changes in the order they commit them, so applying a log in Seq order
// replays the store's history.
type Change struct {
	Seq     int64
	Memory  int64
	Deleted bool
}

// Stored is a memory as an engine reads it back for the index: what
// filters need and its chunks, in key order.
type Stored struct {
	Memory lexindex.Memory
	Chunks []lexindex.Chunk
}

// Apply replays changes (in Seq order) onto ix and reports how many of them
// it applied: all of them, or, when read fails, those before the run it was
// reading (so the caller can go on from there later). Runs of adds are read
// in one call of read, which returns the memories with those keys that are
// still stored, in ascending key order (a memory deleted since is simply
// missing, and its delete follows in the log). A delete ends a run, so a key
// that an engine reused after a delete is read for the add that follows it
// only.
func Apply(ix *lexindex.Index, changes []Change, read func(keys []int64) ([]Stored, error)) (int, error) {
	var run []int64
	start := 0 // the first change of run
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		ms, err := read(run)
		if err != nil {
			return err
		}
		for _, m := range ms {
			ix.Add(m.Memory, m.Chunks)
		}
		run = run[:0]
		return nil
	}
	for i, c := range changes {
		if !c.Deleted {
			if len(run) == 0 {
				start = i
			}
			run = append(run, c.Memory)
			continue
		}
		if err := flush(); err != nil {
			return start, err
		}
		ix.Delete(c.Memory)
	}
	if err := flush(); err != nil {
		return start, err
	}
	return len(changes), nil
}
