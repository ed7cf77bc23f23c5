package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/memory/pgstore"
	"github.com/hearth-mcp/hearth/pkg/memory/pgstore/pgtest"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// wholeGraph reads ws's graph through every page.
func wholeGraph(t *testing.T, g store.Graph, ws string) store.Subgraph {
	t.Helper()
	var out store.Subgraph
	for cursor := ""; ; {
		p, err := g.ReadGraph(context.Background(), ws, cursor, 7)
		if err != nil {
			t.Fatal(err)
		}
		out.Entities = append(out.Entities, p.Entities...)
		out.Relations = append(out.Relations, p.Relations...)
		if cursor = p.Next; cursor == "" {
			return out
		}
	}
}

// opened reports whether OpenNodes on g finds name with observation obs.
func opened(g store.Graph, name, obs string) (bool, error) {
	sg, err := g.OpenNodes(context.Background(), "default", []string{name})
	if err != nil {
		return false, err
	}
	return len(sg.Entities) == 1 && slices.Contains(sg.Entities[0].Observations, obs), nil
}

// waitGraph polls cond until it holds and returns how long that took; it
// fails past limit.
func waitGraph(t *testing.T, limit time.Duration, what string, cond func() (bool, error)) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ok, err := cond()
		if err == nil && ok {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v (last error %v)", what, limit, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestTwoDaemonsShareOneGraph: graph writes through one store are read
// through the other: at once by the read's probe of the graph log, and by
// LISTEN/NOTIFY alone with the probe off. Deletes cascade on both, and a
// memory deleted through one loses its links on both.
func TestTwoDaemonsShareOneGraph(t *testing.T) {
	for _, probe := range []bool{true, false} {
		t.Run(map[bool]string{true: "probe", false: "notify-only"}[probe], func(t *testing.T) {
			defer pgstore.SetGraphProbeForTest(pgstore.SetGraphProbeForTest(probe))
			srv := pgtest.Shared(t)
			dsn := srv.DSN(srv.CreateDB(t))
			a := open(t, dsn, pgstore.Options{Poll: time.Hour})
			b := open(t, dsn, pgstore.Options{Poll: time.Hour})
			ctx := context.Background()
			var seen []time.Duration
			for i := 0; i < 20; i++ {
				from, to := a, b
				if i%2 == 1 {
					from, to = b, a
				}
				name, obs := fmt.Sprintf("Entity%d", i), fmt.Sprintf("observed%dword", i)
				if _, err := from.CreateEntities(ctx, "default", []store.Entity{{Name: name, Type: "thing", Observations: []string{obs}}}); err != nil {
					t.Fatal(err)
				}
				if ok, err := opened(from, name, obs); err != nil || !ok {
					t.Fatalf("the writer does not read back its answered write: %v %v", ok, err)
				}
				seen = append(seen, waitGraph(t, time.Second, "create seen by the other", func() (bool, error) { return opened(to, name, obs) }))
				if i > 0 {
					if _, err := from.CreateRelations(ctx, "default", []store.Relation{{From: fmt.Sprintf("Entity%d", i-1), To: name, Type: "next"}}); err != nil {
						t.Fatal(err)
					}
					seen = append(seen, waitGraph(t, time.Second, "relation seen by the other", func() (bool, error) {
						res, err := to.SearchNodes(ctx, "default", obs, 0)
						return err == nil && len(res.Entities) == 1 && len(res.Relations) == 1, err
					}))
				}
			}
			slices.Sort(seen)
			t.Logf("a graph write on one store read on the other: p50 %v, max %v (%d writes)", seen[len(seen)/2], seen[len(seen)-1], len(seen))

			// A memory linked to entities; deleting an entity through b
			// removes it, its relations and its links on both.
			id, err := a.Add(ctx, mem("Entity3 and Entity4 met"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.ApplyExtractions(ctx, []store.Extraction{{MemoryID: id, Extractor: "test",
				Entities: []store.Entity{{Name: "Entity3", Type: "thing"}, {Name: "Entity4", Type: "thing"}}}}); err != nil {
				t.Fatal(err)
			}
			if err := b.DeleteEntities(ctx, "default", []string{"Entity3"}); err != nil {
				t.Fatal(err)
			}
			for _, s := range []*pgstore.Store{a, b} {
				waitGraph(t, time.Second, "the delete seen on both", func() (bool, error) {
					g := wholeGraph(t, s, "default")
					for _, r := range g.Relations {
						if r.From == "Entity3" || r.To == "Entity3" {
							return false, nil
						}
					}
					return len(g.Entities) == 19, nil
				})
				m, err := s.Mentions(ctx, []string{id})
				if err != nil || !slices.Equal(m[id], []string{"Entity4"}) {
					t.Fatalf("links after the entity's delete: %v %v", m, err)
				}
			}
			if err := b.Delete(ctx, id); err != nil {
				t.Fatal(err)
			}
			for _, s := range []*pgstore.Store{a, b} {
				in, err := s.MentionedIn(ctx, "default", []string{"Entity4"}, 5)
				if err != nil || len(in["Entity4"]) != 0 {
					t.Fatalf("links of a deleted memory: %v %v", in, err)
				}
				if st, err := s.GraphStats(ctx, "default", 5); err != nil || st.Links != 0 || st.Entities != 19 {
					t.Fatalf("stats after the memory's delete: %+v %v", st, err)
				}
			}
		})
	}
}

// TestGraphCatchUpFolds: a store that missed a run of another's graph
// writes (creates, deletes, names and triples recreated, observations
// removed and added back) catches up with all of them at once and ends up
// with the same graph, in the same order, as the writer.
func TestGraphCatchUpFolds(t *testing.T) {
	srv := pgtest.Shared(t)
	dsn := srv.DSN(srv.CreateDB(t))
	a := open(t, dsn, pgstore.Options{Poll: time.Hour})
	b := open(t, dsn, pgstore.Options{Poll: time.Hour})
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := a.CreateEntities(ctx, "default", []store.Entity{{Name: "kept", Type: "t", Observations: []string{"x", "y"}}, {Name: "gone", Type: "t"}})
	must(err)
	if ok, err := opened(b, "kept", "y"); err != nil || !ok {
		t.Fatalf("b before the run: %v %v", ok, err)
	}
	release := b.HoldGraphForTest()
	for i := 0; i < 30; i++ {
		ws := []string{"default", "other"}[i%2]
		name := fmt.Sprintf("n%d", i%7)
		_, err := a.CreateEntities(ctx, ws, []store.Entity{{Name: name, Type: fmt.Sprint("type", i), Observations: []string{fmt.Sprint("o", i), "shared"}}})
		must(err)
		_, err = a.CreateRelations(ctx, ws, []store.Relation{{From: name, To: "kept", Type: "r"}, {From: "kept", To: name, Type: fmt.Sprint("r", i%3)}})
		must(err)
		switch i % 5 {
		case 1:
			must(a.DeleteEntities(ctx, ws, []string{name}))
		case 2:
			must(a.DeleteObservations(ctx, "default", []store.ObservationDelete{{Entity: "kept", Observations: []string{"x"}}}))
		case 3:
			_, err = a.AddObservations(ctx, "default", []store.ObservationAdd{{Entity: "kept", Contents: []string{"x", fmt.Sprint("late", i)}}})
			must(err)
		case 4:
			must(a.DeleteRelations(ctx, ws, []store.Relation{{From: name, To: "kept", Type: "r"}}))
		}
	}
	must(a.DeleteEntities(ctx, "default", []string{"gone"}))
	_, err = a.Import(ctx, "other", store.Subgraph{Entities: []store.Entity{{Name: "gone", Type: "again"}}})
	must(err)
	release()
	for _, ws := range []string{"default", "other"} {
		want, got := wholeGraph(t, a, ws), wholeGraph(t, b, ws)
		if fmt.Sprint(want) != fmt.Sprint(got) {
			t.Fatalf("workspace %s after the catch-up:\nwriter %v\nreader %v", ws, want, got)
		}
		for _, q := range []string{"shared", "kept", "late", "type1"} {
			ra, err := a.SearchNodes(ctx, ws, q, 0)
			must(err)
			rb, err := b.SearchNodes(ctx, ws, q, 0)
			must(err)
			if fmt.Sprint(ra) != fmt.Sprint(rb) {
				t.Fatalf("search %q in %s:\nwriter %v\nreader %v", q, ws, ra, rb)
			}
		}
	}
	// A store opened now loads the same graph from the tables.
	c := open(t, dsn, pgstore.Options{})
	for _, ws := range []string{"default", "other"} {
		if want, got := wholeGraph(t, a, ws), wholeGraph(t, c, ws); fmt.Sprint(want) != fmt.Sprint(got) {
			t.Fatalf("workspace %s loaded at open:\nwriter %v\nloaded %v", ws, want, got)
		}
	}
}

// TestGraphServerDownAndBack: with the server stopped, graph reads and
// writes fail promptly with ErrUnavailable; once it is back, both stores
// serve again without being reopened, and each reads what the other wrote,
// including what was written while its notification connection was down.
func TestGraphServerDownAndBack(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Options{})
	dsn := srv.DSN(srv.CreateDB(t))
	a := open(t, dsn, pgstore.Options{Snapshot: filepath.Join(t.TempDir(), "a.index")})
	b := open(t, dsn, pgstore.Options{})
	ctx := context.Background()
	if _, err := a.CreateEntities(ctx, "default", []store.Entity{{Name: "before", Type: "t", Observations: []string{"the outage"}}}); err != nil {
		t.Fatal(err)
	}
	waitGraph(t, time.Second, "b reads a's write", func() (bool, error) { return opened(b, "before", "the outage") })
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"create": func() error {
			_, err := a.CreateEntities(ctx, "default", []store.Entity{{Name: "during", Type: "t"}})
			return err
		},
		"read":   func() error { _, err := b.ReadGraph(ctx, "default", "", 10); return err },
		"search": func() error { _, err := b.SearchNodes(ctx, "default", "outage", 0); return err },
		"open":   func() error { _, err := a.OpenNodes(ctx, "default", []string{"before"}); return err },
		"related": func() error {
			_, err := a.Related(ctx, store.RelatedQuery{Workspace: "default", Name: "before", Depth: 1, Direction: store.Both})
			return err
		},
		"delete":   func() error { return b.DeleteEntities(ctx, "default", []string{"before"}) },
		"stats":    func() error { _, err := b.GraphStats(ctx, "default", 3); return err },
		"mentions": func() error { _, err := b.Mentions(ctx, []string{"x"}); return err },
		"pending":  func() error { _, err := b.CountPending(ctx, store.ExtractScope{}); return err },
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
	start := time.Now()
	for {
		_, err := b.CreateEntities(ctx, "default", []store.Entity{{Name: "after", Type: "t", Observations: []string{"the recovery"}}})
		if err == nil {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("b still failing 10 s after the server came back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("first graph write answered %v after the server came back", time.Since(start))
	// With the probe off, a learns of it by its poll or its re-established
	// LISTEN alone.
	defer pgstore.SetGraphProbeForTest(pgstore.SetGraphProbeForTest(false))
	d := waitGraph(t, 6*time.Second, "a reads b's write after the recovery", func() (bool, error) { return opened(a, "after", "the recovery") })
	t.Logf("a read b's write %v after it was answered", d)
	if sg := wholeGraph(t, a, "default"); len(sg.Entities) != 2 {
		t.Fatalf("a's graph after the recovery: %+v", sg)
	}
}
