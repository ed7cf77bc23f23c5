package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/memory/chunk"
	"github.com/hearth-mcp/hearth/pkg/memory/internal/synth"
	"github.com/hearth-mcp/hearth/pkg/memory/pgstore"
	"github.com/hearth-mcp/hearth/pkg/memory/pgstore/pgtest"
	"github.com/hearth-mcp/hearth/pkg/memory/sqlitestore"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/memory/terms"
)

func mem(text string) store.NewMemory {
	return store.NewMemory{Workspace: "default", Text: text, Chunks: chunk.Split(text)}
}

func found(t *testing.T, s store.Store, word, id string) (bool, error) {
	t.Helper()
	hits, err := s.SearchLexical(context.Background(), store.Query{Workspace: "default", Limit: 5}, []string{word})
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(hits, func(h store.Hit) bool { return h.Memory.ID == id }), nil
}

// waitFound polls until s finds (or no longer finds) id by word, and returns
// how long that took; it fails past limit.
func waitFound(t *testing.T, s store.Store, word, id string, want bool, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ok, err := found(t, s, word, id)
		if err == nil && ok == want {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("after %v: found(%s) = %v (err %v), want %v", limit, word, ok, err, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestTwoDaemonsShareOneDatabase: an add or delete through one store is
// searchable through the other within a second: by the search's own probe
// of the log, and by LISTEN/NOTIFY alone when the probe is off.
func TestTwoDaemonsShareOneDatabase(t *testing.T) {
	for _, probe := range []bool{true, false} {
		t.Run(map[bool]string{true: "probe", false: "notify-only"}[probe], func(t *testing.T) {
			defer pgstore.SetProbeForTest(pgstore.SetProbeForTest(probe))
			srv := pgtest.Shared(t)
			dsn := srv.DSN(srv.CreateDB(t))
			a := open(t, dsn, pgstore.Options{Snapshot: filepath.Join(t.TempDir(), "a.index"), Poll: time.Hour})
			b := open(t, dsn, pgstore.Options{Snapshot: filepath.Join(t.TempDir(), "b.index"), Poll: time.Hour})
			ctx := context.Background()
			var seen []time.Duration
			for i := 0; i < 20; i++ {
				from, to := a, b
				if i%2 == 1 {
					from, to = b, a
				}
				word := fmt.Sprintf("shared%dword", i)
				id, err := from.Add(ctx, mem("a memory holding "+word))
				if err != nil {
					t.Fatal(err)
				}
				if ok, err := found(t, from, word, id); err != nil || !ok {
					t.Fatalf("the writer itself does not find its answered add: %v %v", ok, err)
				}
				seen = append(seen, waitFound(t, to, word, id, true, time.Second))
				if err := to.Delete(ctx, id); err != nil {
					t.Fatal(err)
				}
				seen = append(seen, waitFound(t, from, word, id, false, time.Second))
			}
			slices.Sort(seen)
			t.Logf("write on one store searchable on the other: p50 %v, max %v (%d adds and deletes)", seen[len(seen)/2], seen[len(seen)-1], len(seen))
		})
	}
}

// TestSameTopKAsSQLite: both engines rank the same corpus identically.
func TestSameTopKAsSQLite(t *testing.T) {
	srv := pgtest.Shared(t)
	pg := open(t, srv.DSN(srv.CreateDB(t)), pgstore.Options{})
	lite, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	c := synth.New(9)
	ctx := context.Background()
	var ids [2][]string
	n := 1500
	if testing.Short() { // the race step: agreement, not the corpus's size, is what this checks
		n = 300
	}
	for i := 0; i < n; i++ {
		m := c.Memory()
		nm := store.NewMemory{Workspace: "default", Text: m.Text, Chunks: chunk.Split(m.Text), Metadata: store.Metadata{Source: m.Source, Tags: m.Tags, Time: m.Time}}
		for j, s := range []store.Store{pg, lite} {
			id, err := s.Add(ctx, nm)
			if err != nil {
				t.Fatal(err)
			}
			ids[j] = append(ids[j], id)
		}
		if i%10 == 3 { // and deletes, alike
			for j, s := range []store.Store{pg, lite} {
				if err := s.Delete(ctx, ids[j][i/2]); err != nil && !errors.Is(err, store.ErrNotFound) {
					t.Fatal(err)
				}
			}
		}
	}
	for q, text := range synth.Queries(100) {
		words := terms.Split(text)
		f := store.Filters{}
		if q%4 == 1 {
			f.Tags = []string{"tag-1"}
		}
		query := store.Query{Workspace: "default", Limit: 10, Filters: f}
		hp, err := pg.SearchLexical(ctx, query, words)
		if err != nil {
			t.Fatal(err)
		}
		hl, err := lite.SearchLexical(ctx, query, words)
		if err != nil {
			t.Fatal(err)
		}
		if len(hp) != len(hl) {
			t.Fatalf("query %v: %d hits on PostgreSQL, %d on SQLite", words, len(hp), len(hl))
		}
		for i := range hp {
			if hp[i].Memory.Text != hl[i].Memory.Text || math.Abs(hp[i].Score-hl[i].Score) > 1e-9 {
				t.Fatalf("query %v rank %d: PostgreSQL %.4f %.30q, SQLite %.4f %.30q", words, i, hp[i].Score, hp[i].Memory.Text, hl[i].Score, hl[i].Memory.Text)
			}
		}
	}
}

// TestServerDownAndBack: with the server stopped, calls fail promptly with
// ErrUnavailable; once it is back, both stores serve again without being
// reopened, and each catches up with what the other wrote.
func TestServerDownAndBack(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Options{})
	dsn := srv.DSN(srv.CreateDB(t))
	a := open(t, dsn, pgstore.Options{})
	b := open(t, dsn, pgstore.Options{})
	ctx := context.Background()
	id, err := a.Add(ctx, mem("written before the outage"))
	if err != nil {
		t.Fatal(err)
	}
	waitFound(t, b, "outage", id, true, time.Second)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"add": func() error { _, err := a.Add(ctx, mem("during the outage")); return err },
		"search": func() error {
			_, err := a.SearchLexical(ctx, store.Query{Workspace: "default", Limit: 3}, []string{"outage"})
			return err
		},
		"get":    func() error { _, err := b.Get(ctx, id); return err },
		"delete": func() error { return b.Delete(ctx, id) },
		"stats":  func() error { _, err := b.Stats(ctx); return err },
	} {
		start := time.Now()
		err := call()
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s with the server down = %v, want ErrUnavailable", name, err)
		}
		if d := time.Since(start); d > 4*time.Second {
			t.Errorf("%s took %v with the server down", name, d)
		}
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	// b writes first after the restart: a learns of it by its poll or its
	// re-established LISTEN, with no reopen.
	var id2 string
	start := time.Now()
	for {
		id2, err = b.Add(ctx, mem("written after the recovery"))
		if err == nil {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("b still failing 10 s after the server came back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("first add answered %v after the server came back", time.Since(start))
	d := waitFound(t, a, "recovery", id2, true, 6*time.Second)
	t.Logf("a found b's write %v after it was answered", d)
}

// TestSnapshot: a closed store leaves a snapshot the next open uses, and
// catches up from it with what others wrote since; a damaged, foreign or
// future snapshot is rebuilt from the database, never trusted.
func TestSnapshot(t *testing.T) {
	srv := pgtest.Shared(t)
	dsn := srv.DSN(srv.CreateDB(t))
	snap := filepath.Join(t.TempDir(), "memory.index")
	ctx := context.Background()
	a, err := pgstore.Open(ctx, dsn, pgstore.Options{Build: "t", Snapshot: snap})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < 50; i++ {
		id, err := a.Add(ctx, mem(fmt.Sprintf("snapshot memory %d kiwi%d", i, i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	a.Close()
	// Another daemon writes while this one is away.
	other := open(t, dsn, pgstore.Options{})
	late, err := other.Add(ctx, mem("written while away: mango"))
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Delete(ctx, ids[3]); err != nil {
		t.Fatal(err)
	}
	reopen := func(want string) *pgstore.Store {
		t.Helper()
		s, err := pgstore.Open(ctx, dsn, pgstore.Options{Build: "t", Snapshot: snap})
		if err != nil {
			t.Fatal(err)
		}
		from, err := s.LoadedFrom(ctx)
		if err != nil || from != want {
			t.Fatalf("index loaded from %q (%v), want %s", from, err, want)
		}
		for i, word := range map[int]string{0: "kiwi0", 3: "kiwi3", 49: "kiwi49"} {
			ok, err := found(t, s, word, ids[i])
			if err != nil || ok != (i != 3) {
				t.Fatalf("from %s: found %s = %v, %v", want, word, ok, err)
			}
		}
		if ok, err := found(t, s, "mango", late); err != nil || !ok {
			t.Fatalf("from %s: the other's write not found: %v", want, err)
		}
		return s
	}
	reopen("snapshot").Close()
	// Damaged: one byte flipped in the middle.
	b, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(snap, b, 0o600); err != nil {
		t.Fatal(err)
	}
	reopen("database").Close() // and saves a good one again
	reopen("snapshot").Close()
	// Of another database: rebuilt.
	dsn2 := srv.DSN(srv.CreateDB(t))
	s2, err := pgstore.Open(ctx, dsn2, pgstore.Options{Build: "t", Snapshot: snap})
	if err != nil {
		t.Fatal(err)
	}
	if from, _ := s2.LoadedFrom(ctx); from != "database" {
		t.Fatalf("a snapshot of another database was used (%s)", from)
	}
	s2.Close() // saves the (empty) snapshot of dsn2 over it
	reopen("database").Close()
	// Ahead of the store (its change is not in the log): rebuilt.
	if err := srv.Exec(ctx, dbName(t, dsn), `DELETE FROM hearth_changes WHERE seq = (SELECT max(seq) FROM hearth_changes)`); err != nil {
		t.Fatal(err)
	}
	reopen("database").Close()
}

func dbName(t *testing.T, dsn string) string {
	t.Helper()
	for _, f := range strings.Fields(dsn) {
		if name, ok := strings.CutPrefix(f, "dbname="); ok {
			return name
		}
	}
	t.Fatalf("no dbname in %s", dsn)
	return ""
}
