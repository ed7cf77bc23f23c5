package pgstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hearth-mcp/hearth/pkg/memory/pgstore"
	"github.com/hearth-mcp/hearth/pkg/memory/pgstore/pgtest"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// query runs a query returning one number.
func query(t *testing.T, dsn, sql string) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// ranked is what s answers for word: the ids of its top hits, in order.
func ranked(t *testing.T, s store.Store, word string) []string {
	t.Helper()
	hits, err := s.SearchLexical(context.Background(), store.Query{Workspace: "default", Limit: 20}, []string{word})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.Memory.ID)
	}
	return ids
}

// TestLogsStayBounded: with every daemon pruning every 50 ms (a lease of
// 300 ms), thousands of memory and graph writes leave both change logs a
// few rows long, not growing with the writes. Two daemons fall behind the
// pruning point meanwhile and converge: one up but silent (it applies
// nothing: its index and graph are held), which rebuilds both in place at
// its next read, and one down (closed, its snapshot stamped with a change
// since pruned), which rebuilds at its next start.
func TestLogsStayBounded(t *testing.T) {
	srv := pgtest.Shared(t)
	dsn := srv.DSN(srv.CreateDB(t))
	ctx := context.Background()
	fast := pgstore.Options{Prune: 50 * time.Millisecond, Lease: 300 * time.Millisecond}
	a := open(t, dsn, fast)

	// The late daemon: it writes, saves its snapshot and goes away.
	snap := filepath.Join(t.TempDir(), "late.index")
	lateOpts := fast
	lateOpts.Snapshot, lateOpts.Build = snap, "test"
	late, err := pgstore.Open(ctx, dsn, lateOpts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if _, err := late.Add(ctx, mem(fmt.Sprintf("before pruning %d: wombat common%d", i, i%5))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := late.CreateEntities(ctx, "default", []store.Entity{{Name: "Wombat", Type: "animal", Observations: []string{"digs"}}}); err != nil {
		t.Fatal(err)
	}
	late.Close()

	// What the silent daemon will hold, to be removed while it is silent.
	if _, err := a.CreateEntities(ctx, "default", []store.Entity{{Name: "Quoll", Type: "animal", Observations: []string{"climbs"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateRelations(ctx, "default", []store.Relation{{From: "Wombat", To: "Quoll", Type: "meets"}}); err != nil {
		t.Fatal(err)
	}

	// The silent daemon: it reports once, then applies nothing.
	silent := open(t, dsn, pgstore.Options{Prune: time.Hour, Poll: time.Hour})
	if _, err := silent.LoadedFrom(ctx); err != nil {
		t.Fatal(err)
	}
	releaseIndex, releaseGraph := silent.HoldIndexForTest(), silent.HoldGraphForTest()
	held := true
	defer func() {
		if held {
			releaseIndex()
			releaseGraph()
		}
	}()

	const writers, rounds = 8, 150
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				id, err := a.Add(ctx, mem(fmt.Sprintf("while pruning %d/%d: numbat common%d", w, i, i%5)))
				if err == nil && i%3 == 0 {
					err = a.Delete(ctx, id)
				}
				name := fmt.Sprintf("Numbat %d", w)
				if err == nil && i == 0 {
					_, err = a.CreateEntities(ctx, "default", []store.Entity{{Name: name, Type: "animal"}})
				}
				if err == nil {
					_, err = a.AddObservations(ctx, "default", []store.ObservationAdd{{Entity: name, Contents: []string{fmt.Sprintf("seen %d", i)}}})
				}
				if err == nil && i == 5 && w == 0 {
					err = a.DeleteEntities(ctx, "default", []string{"Quoll"})
				}
				if err == nil && i == 5 && w == 1 {
					err = a.DeleteObservations(ctx, "default", []store.ObservationDelete{{Entity: "Wombat", Observations: []string{"digs"}}})
				}
				if err == nil && i%10 == 9 {
					err = a.DeleteObservations(ctx, "default", []store.ObservationDelete{{Entity: name, Observations: []string{fmt.Sprintf("seen %d", i-1)}}})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	// Sample both logs' lengths while the writes go on.
	done := make(chan struct{})
	var most, gMost int64
	go func() {
		wg.Wait()
		close(done)
	}()
	warm := time.Now().Add(time.Second) // the leases of the others run out
sample:
	for {
		select {
		case <-done:
			break sample
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(warm) {
			most = max(most, query(t, dsn, `SELECT count(*) FROM hearth_changes`))
			gMost = max(gMost, query(t, dsn, `SELECT count(*) FROM hearth_graph_changes`))
		}
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	written := query(t, dsn, `SELECT change FROM hearth_counters`)
	gWritten := query(t, dsn, `SELECT change FROM hearth_graph_counters`)
	// Once the writes stop, one more round of pruning leaves each log its
	// last change.
	waitGraph(t, 5*time.Second, "both logs pruned to their last change", func() (bool, error) {
		return query(t, dsn, `SELECT count(*) FROM hearth_changes`) <= 1 && query(t, dsn, `SELECT count(*) FROM hearth_graph_changes`) <= 1, nil
	})
	t.Logf("memory log: %d changes written, at most %d rows kept while writing; graph log: %d and %d", written, most, gWritten, gMost)
	if written < writers*rounds || most > written/3 || gMost > gWritten/3 {
		t.Errorf("the logs were not kept short: memory %d of %d, graph %d of %d", most, written, gMost, gWritten)
	}
	pruned := query(t, dsn, `SELECT changes FROM hearth_pruned`)
	if pruned <= silent.Applied || pruned <= 51 {
		t.Fatalf("pruned to %d: not past the silent daemon (%d) and the late one's snapshot (51)", pruned, silent.Applied)
	}

	// The silent daemon comes back: its next read finds its place pruned
	// and rebuilds.
	releaseIndex()
	releaseGraph()
	held = false
	for _, word := range []string{"wombat", "numbat", "common3", "while"} {
		if got, want := ranked(t, silent, word), ranked(t, a, word); !slices.Equal(got, want) {
			t.Errorf("silent daemon, %q: %v, want %v", word, got, want)
		}
	}
	if got, want := wholeGraph(t, silent, "default"), wholeGraph(t, a, "default"); !slices.EqualFunc(got.Entities, want.Entities, sameEntity) || len(got.Relations) != len(want.Relations) {
		t.Errorf("silent daemon's graph:\n%+v\nwant\n%+v", got, want)
	}

	// The late daemon starts again: its snapshot names a pruned change, so
	// it rebuilds, and answers as the others do.
	lateAgain := open(t, dsn, lateOpts)
	if from, err := lateAgain.LoadedFrom(ctx); err != nil || from != "database" {
		t.Fatalf("late daemon loaded from %q, %v; want a rebuild", from, err)
	}
	for _, word := range []string{"wombat", "numbat", "common3"} {
		if got, want := ranked(t, lateAgain, word), ranked(t, a, word); !slices.Equal(got, want) {
			t.Errorf("late daemon, %q: %v, want %v", word, got, want)
		}
	}
	if got, want := wholeGraph(t, lateAgain, "default"), wholeGraph(t, a, "default"); !slices.EqualFunc(got.Entities, want.Entities, sameEntity) {
		t.Errorf("late daemon's graph:\n%+v\nwant\n%+v", got, want)
	}
	if g := wholeGraph(t, a, "default"); len(g.Entities) != writers+1 || len(g.Relations) != 0 {
		t.Errorf("graph holds %d entities and %d relations, want %d and none", len(g.Entities), len(g.Relations), writers+1)
	}
}

func sameEntity(a, b store.Entity) bool {
	return a.Name == b.Name && a.Type == b.Type && slices.Equal(a.Observations, b.Observations)
}
