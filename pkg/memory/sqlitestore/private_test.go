//go:build unix

package sqlitestore_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/memory/sqlitestore"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// The database and its -wal and -shm are 0600 whatever the umask (SQLite
// alone creates them 0644 less it), and a database an older build left
// readable by others is narrowed when it is opened.
func TestStoreFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for _, existing := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "memory.db")
		if existing {
			s, err := sqlitestore.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			os.Chmod(path, 0o644)
		}
		s, err := sqlitestore.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Add(context.Background(), store.NewMemory{Workspace: "default", Text: "private", Chunks: []string{"private"}}); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("existing=%v: %s is %#o, want 0600", existing, filepath.Base(p), fi.Mode().Perm())
			}
		}
		s.Close()
	}
}
