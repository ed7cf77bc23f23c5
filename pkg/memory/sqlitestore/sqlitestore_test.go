package sqlitestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/memory/chunk"
	"github.com/hearth-mcp/hearth/pkg/memory/sqlitestore"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/memory/storetest"
)

func newStore(t *testing.T) store.Store {
	s, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) { storetest.Run(t, newStore) }

func TestGraphContract(t *testing.T) { storetest.RunGraph(t, newStore) }

func TestOpenBrokenFile(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
	}{
		{"not a database", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("this is not an SQLite database, just some text that is long enough to have a header............................................."), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"directory in the way", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"missing parent", func(t *testing.T, path string) {}},
		{"newer schema", func(t *testing.T, path string) {
			s, err := sqlitestore.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			if err := sqlitestore.SetSchemaVersionForTest(path, sqlitestore.SchemaVersion+1); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "memory.db")
			if tc.name == "missing parent" {
				path = filepath.Join(dir, "nope", "memory.db")
			}
			tc.setup(t, path)
			s, err := sqlitestore.Open(context.Background(), path)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded on a broken store")
			}
			if !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("Open = %v, want ErrUnavailable", err)
			}
		})
	}
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := sqlitestore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Add(context.Background(), store.NewMemory{Workspace: "default", Text: "persisted", Chunks: []string{"persisted"}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = sqlitestore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m, err := s.Get(context.Background(), id)
	if err != nil || m.Text != "persisted" {
		t.Fatalf("after reopen Get = %+v, %v", m, err)
	}
	// The index is rebuilt from the file.
	hits, err := s.SearchLexical(context.Background(), store.Query{Workspace: "default", Limit: 10}, []string{"persisted"})
	if err != nil || len(hits) != 1 || hits[0].Memory.ID != id {
		t.Fatalf("after reopen search = %+v, %v", hits, err)
	}
}

// TestMigrateFromFTS5: a database written by the build that ranked with FTS5
// (schema version 1) opens, loses its FTS5 tables, and keeps every memory
// findable, deletable and addable.
func TestMigrateFromFTS5(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	old, err := sqlitestore.CreateAtVersionForTest(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"the old lighthouse keeper", "a second lighthouse note"} {
		if _, err := old.Exec(`INSERT INTO memories(uid, workspace, text, source, tags, ts, added, chunks) VALUES (?, 'default', ?, 'src', '["t"]', ?, ?, 1)`,
			fmt.Sprintf("old-%d", i), text, 1000+i, 1000+i); err != nil {
			t.Fatal(err)
		}
		if _, err := old.Exec(`INSERT INTO chunks(memory_id, seq, text) VALUES (last_insert_rowid(), 0, ?)`, text); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := old.Exec(`INSERT INTO chunks_fts(rowid, text) SELECT id, text FROM chunks`); err != nil {
		t.Fatal(err)
	}
	old.Close()

	s, err := sqlitestore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hits, err := s.SearchLexical(context.Background(), store.Query{Workspace: "default", Limit: 10, Filters: store.Filters{Tags: []string{"t"}}}, []string{"lighthouse"})
	if err != nil || len(hits) != 2 {
		t.Fatalf("search after migration = %+v, %v", hits, err)
	}
	if err := s.Delete(context.Background(), "old-0"); err != nil {
		t.Fatalf("delete after migration (its FTS5 trigger is gone): %v", err)
	}
	if _, err := s.Add(context.Background(), store.NewMemory{Workspace: "default", Text: "new lighthouse", Chunks: []string{"new lighthouse"}}); err != nil {
		t.Fatal(err)
	}
	hits, err = s.SearchLexical(context.Background(), store.Query{Workspace: "default", Limit: 10}, []string{"lighthouse"})
	if err != nil || len(hits) != 2 {
		t.Fatalf("search after delete and add = %+v, %v", hits, err)
	}
	st, err := s.Stats(context.Background())
	if err != nil || st.Memories != 2 {
		t.Fatalf("stats = %+v, %v", st, err)
	}
}

// TestLargeBatches: many long memories committed at once need more rows than
// one INSERT may bind; every one must come back whole and be found by the
// word only it holds.
func TestLargeBatches(t *testing.T) {
	s := newStore(t)
	const n = 48
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 3600) // ~97 000 characters
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := filler + fmt.Sprintf(" marker%d", i)
			id, err := s.Add(context.Background(), store.NewMemory{Workspace: "default", Text: text, Chunks: chunk.Split(text)})
			ids[i] = id
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range ids {
		hits, err := s.SearchLexical(context.Background(), store.Query{Workspace: "default", Limit: 10}, []string{fmt.Sprintf("marker%d", i)})
		if err != nil || len(hits) != 1 || hits[0].Memory.ID != id || len(hits[0].Memory.Text) != len(filler)+len(fmt.Sprintf(" marker%d", i)) {
			t.Fatalf("memory %d: hits %d, err %v", i, len(hits), err)
		}
		if want := len(chunk.Split(hits[0].Memory.Text)); hits[0].Memory.Chunks != want {
			t.Fatalf("memory %d has %d chunks, want %d", i, hits[0].Memory.Chunks, want)
		}
	}
}
