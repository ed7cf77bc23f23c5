package sqlitestore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/memory/chunk"
	"github.com/hearth-mcp/hearth/pkg/memory/sqlitestore"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

func addText(t *testing.T, s store.Store, text string) string {
	t.Helper()
	id, err := s.Add(context.Background(), store.NewMemory{Workspace: "default", Text: text, Chunks: chunk.Split(text)})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func finds(t *testing.T, s store.Store, word, id string) bool {
	t.Helper()
	hits, err := s.SearchLexical(context.Background(), store.Query{Workspace: "default", Limit: 5}, []string{word})
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(hits, func(h store.Hit) bool { return h.Memory.ID == id })
}

func openAt(t *testing.T, path, wantFrom string) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	from, err := s.LoadedFrom(context.Background())
	if err != nil || from != wantFrom {
		t.Fatalf("index loaded from %q (%v), want %s", from, err, wantFrom)
	}
	return s
}

// TestSnapshotWarmStart: a closed store leaves a snapshot the next open
// maps; what was written after it (by a process killed before it could
// save again) is caught up from the change log; a damaged, foreign or
// future snapshot is rebuilt from the database, never trusted.
func TestSnapshotWarmStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.db")
	s := openAt(t, path, "database")
	var ids []string
	for i := 0; i < 40; i++ {
		ids = append(ids, addText(t, s, fmt.Sprintf("warm start memory %d fig%d", i, i)))
	}
	if err := s.Delete(context.Background(), ids[5]); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, "memory.index")); err != nil {
		t.Fatalf("no snapshot after Close: %v", err)
	}

	s = openAt(t, path, "snapshot")
	// Written after the snapshot by a store that never closes (as if killed).
	late := addText(t, s, "written after the snapshot: papaya")
	if err := s.Delete(context.Background(), ids[7]); err != nil {
		t.Fatal(err)
	}
	again := addText(t, s, "one more after a delete: quince")
	check := func(s store.Store) {
		t.Helper()
		for i, want := range map[int]bool{0: true, 5: false, 7: false, 39: true} {
			if got := finds(t, s, fmt.Sprintf("fig%d", i), ids[i]); got != want {
				t.Errorf("fig%d found = %v, want %v", i, got, want)
			}
		}
		if !finds(t, s, "papaya", late) || !finds(t, s, "quince", again) {
			t.Error("the writes after the snapshot are not found")
		}
	}
	killed := openAt(t, path, "snapshot") // the first is still open: it never saved
	check(killed)
	killed.Close()
	s.Close()

	s = openAt(t, path, "snapshot")
	check(s)
	s.Close()

	snap := filepath.Join(dir, "memory.index")
	b, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/3] ^= 1
	if err := os.WriteFile(snap, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path, "database")
	check(s)
	s.Close()

	// Another store's snapshot in its place: rebuilt.
	other := filepath.Join(t.TempDir(), "memory.db")
	o := openAt(t, other, "database")
	addText(t, o, "another store")
	o.Close()
	ob, err := os.ReadFile(filepath.Join(filepath.Dir(other), "memory.index"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(snap, ob, 0o600); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path, "database")
	check(s)
	s.Close()

	// A database restored from before the snapshot: the snapshot is ahead.
	s = openAt(t, path, "snapshot")
	s.Close()
	if err := sqlitestore.ExecForTest(path, `DELETE FROM changes WHERE seq = (SELECT max(seq) FROM changes)`); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path, "database")
	s.Close()
}
