package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/hearth-mcp/hearth/pkg/memory/lexindex"
	"github.com/hearth-mcp/hearth/pkg/memory/rank"
)

// loadIndex builds the lexical index from every chunk in the database, in row
// id order (the order the index requires). It runs once per open, before the
// store takes adds or searches.
func loadIndex(ctx context.Context, db *sql.DB) (*lexindex.Index, error) {
	return rank.Load(func(f *rank.Feed) error { return readChunks(ctx, db, f) })
}

// readChunks feeds every chunk with its memory to f, in row id order.
func readChunks(ctx context.Context, db *sql.DB, f *rank.Feed) error {
	rows, err := db.QueryContext(ctx, `SELECT m.id, m.workspace, m.source, m.tags, m.ts, c.id, c.text
		FROM chunks c JOIN memories m ON m.id = c.memory_id ORDER BY c.id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var m lexindex.Memory
		var tags string
		var c lexindex.Chunk
		if err := rows.Scan(&m.Key, &m.Workspace, &m.Source, &tags, &m.Time, &c.Key, &c.Text); err != nil {
			return err
		}
		if f.Chunk(m.Key, c) {
			continue
		}
		if err := json.Unmarshal([]byte(tags), &m.Tags); err != nil {
			return fmt.Errorf("tags of memory row %d: %w", m.Key, err)
		}
		f.Memory(m, c)
	}
	return rows.Err()
}
