package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/hearth-mcp/hearth/pkg/memory/lexindex"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// loadIndex builds the lexical index from every chunk in the database, in row
// id order (the order the index requires). It runs once per open, before the
// store takes adds or searches. Reading rows (SQLite's work) and tokenizing
// them (the index's) run in two goroutines, a batch of memories apart.
func loadIndex(ctx context.Context, db *sql.DB) (*lexindex.Index, error) {
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
	err := readChunks(ctx, db, batches)
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

// readChunks sends every memory with its chunks to out, in row id order.
func readChunks(ctx context.Context, db *sql.DB, out chan<- []loaded) error {
	rows, err := db.QueryContext(ctx, `SELECT m.id, m.workspace, m.source, m.tags, m.ts, c.id, c.text
		FROM chunks c JOIN memories m ON m.id = c.memory_id ORDER BY c.id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	batch := make([]loaded, 0, loadBatch)
	for rows.Next() {
		var m lexindex.Memory
		var tags string
		var c lexindex.Chunk
		if err := rows.Scan(&m.Key, &m.Workspace, &m.Source, &tags, &m.Time, &c.Key, &c.Text); err != nil {
			return err
		}
		if n := len(batch); n > 0 && batch[n-1].mem.Key == m.Key {
			batch[n-1].chunks = append(batch[n-1].chunks, c)
			continue
		}
		if len(batch) == loadBatch {
			out <- batch
			batch = make([]loaded, 0, loadBatch)
		}
		if err := json.Unmarshal([]byte(tags), &m.Tags); err != nil {
			return fmt.Errorf("tags of memory row %d: %w", m.Key, err)
		}
		batch = append(batch, loaded{mem: m, chunks: []lexindex.Chunk{c}})
	}
	if err := rows.Err(); err != nil {
		return err
	}
	out <- batch
	return nil
}

// indexMemory is what the index keeps of a memory just stored with row id key.
func indexMemory(key int64, m store.NewMemory) lexindex.Memory {
	return lexindex.Memory{Key: key, Workspace: m.Workspace, Source: m.Metadata.Source, Tags: m.Metadata.Tags, Time: m.Metadata.Time.UnixMilli()}
}
