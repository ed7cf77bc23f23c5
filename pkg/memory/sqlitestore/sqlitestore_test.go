package sqlitestore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

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
}
