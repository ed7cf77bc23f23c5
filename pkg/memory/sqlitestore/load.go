package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/memory/lexindex"
	"github.com/hearth-mcp/hearth/pkg/memory/rank"
)

// load sets the index: from the snapshot when it is this store's and the
// change log still has the change it names, then caught up from the log;
// else rebuilt from every chunk (and saved, in the background). It runs
// once per open on the write connection, before the writer takes adds.
func (s *Store) load(ctx context.Context) error {
	rebuilt, err := s.LoadIndex(func() bool {
		return s.LoadSnapshot(func(seq int64) (mem int64, found bool, err error) {
			err = s.w.QueryRowContext(ctx, `SELECT memory_id FROM changes WHERE seq = ?`, seq).Scan(&mem)
			if errors.Is(err, sql.ErrNoRows) {
				return 0, false, nil
			}
			return mem, err == nil, err
		})
	}, func() error { return s.rebuild(ctx) }, func() error { return s.catchUp(ctx) })
	if rebuilt {
		s.saving.Add(1)
		go func() { defer s.saving.Done(); s.SaveSnapshot() }()
	}
	return err
}

// rebuild builds the index from every chunk, and takes the log's last change.
func (s *Store) rebuild(ctx context.Context) error {
	if err := s.w.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0), coalesce((SELECT memory_id FROM changes ORDER BY seq DESC LIMIT 1), 0) FROM changes`).
		Scan(&s.Applied, &s.AppliedMem); err != nil {
		return err
	}
	ix, err := rank.Load(func(f *rank.Feed) error { return readChunks(ctx, s.w, f) })
	if err != nil {
		return err
	}
	s.SetIndex(ix)
	return nil
}

// catchUp applies the changes logged after the one the index reflects.
func (s *Store) catchUp(ctx context.Context) error {
	rows, err := s.w.QueryContext(ctx, `SELECT seq, memory_id, deleted FROM changes WHERE seq > ? ORDER BY seq`, s.Applied)
	if err != nil {
		return err
	}
	var changes []rank.Change
	for rows.Next() {
		var c rank.Change
		if err := rows.Scan(&c.Seq, &c.Memory, &c.Deleted); err != nil {
			rows.Close()
			return err
		}
		changes = append(changes, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	n, err := rank.Apply(s.Index(), changes, func(keys []int64) ([]rank.Stored, error) { return readStored(ctx, s.w, keys) })
	if n > 0 {
		s.Applied, s.AppliedMem = changes[n-1].Seq, changes[n-1].Memory
	}
	return err
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

// readStored reads the memories with the given keys (ascending) that still
// exist, with their chunks, in key order.
func readStored(ctx context.Context, db *sql.DB, keys []int64) ([]rank.Stored, error) {
	var out []rank.Stored
	for len(keys) > 0 {
		n := min(len(keys), 500)
		args := make([]any, n)
		for i, k := range keys[:n] {
			args[i] = k
		}
		keys = keys[n:]
		rows, err := db.QueryContext(ctx, `SELECT m.id, m.workspace, m.source, m.tags, m.ts, c.id, c.text
			FROM chunks c JOIN memories m ON m.id = c.memory_id WHERE m.id IN (?`+strings.Repeat(`, ?`, n-1)+`) ORDER BY m.id, c.id`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var m lexindex.Memory
			var tags string
			var c lexindex.Chunk
			if err := rows.Scan(&m.Key, &m.Workspace, &m.Source, &tags, &m.Time, &c.Key, &c.Text); err != nil {
				rows.Close()
				return nil, err
			}
			if l := len(out); l > 0 && out[l-1].Memory.Key == m.Key {
				out[l-1].Chunks = append(out[l-1].Chunks, c)
				continue
			}
			if err := json.Unmarshal([]byte(tags), &m.Tags); err != nil {
				rows.Close()
				return nil, fmt.Errorf("tags of memory row %d: %w", m.Key, err)
			}
			out = append(out, rank.Stored{Memory: m, Chunks: []lexindex.Chunk{c}})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
