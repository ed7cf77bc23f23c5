package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hearth-mcp/hearth/pkg/memory/internal/synth"
	"github.com/hearth-mcp/hearth/pkg/memory/pgstore"
	"github.com/hearth-mcp/hearth/pkg/memory/pgstore/pgtest"
	"github.com/hearth-mcp/hearth/pkg/memory/sqlitestore"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/memory/terms"
)

// The benchmarks run both engines in one run, on the same corpus, so their
// figures compare: durable adds from 1 and 16 clients, and at n memories
// (HEARTH_BENCH_MEMORIES, default 100 000) the search latency and the time
// from opening a store to its first answered search, rebuilding the index
// and from its snapshot. PostgreSQL runs on a local server with fsync on for
// the adds (durable as SQLite's synchronous=FULL), off for filling.

// engine opens a store of one kind at a place that survives reopening.
type engine struct {
	name string
	open func(b *testing.B) store.Store
	// snapshot is the store's index snapshot file.
	snapshot string
}

// dsn is the PostgreSQL database of the last engines call.
var dsn string

func engines(b *testing.B, durable bool) []engine {
	srv := pgtest.Start(b, pgtest.Options{Durable: durable})
	dsn = srv.DSN(srv.CreateDB(b))
	dir := b.TempDir()
	pgSnap := filepath.Join(dir, "memory-pg.index")
	litePath := filepath.Join(dir, "memory.db")
	return []engine{
		{"sqlite", func(b *testing.B) store.Store {
			s, err := sqlitestore.Open(context.Background(), litePath)
			if err != nil {
				b.Fatal(err)
			}
			return s
		}, sqlitestore.SnapshotPath(litePath)},
		{"postgres", func(b *testing.B) store.Store {
			s, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Build: "bench", Snapshot: pgSnap})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}, pgSnap},
	}
}

func BenchmarkAdd(b *testing.B) {
	for _, e := range engines(b, true) {
		for _, clients := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/clients=%d", e.name, clients), func(b *testing.B) {
				s := e.open(b)
				defer s.Close()
				var seed atomic.Uint64
				var n atomic.Int64
				start := time.Now()
				jobs := make(chan struct{})
				var wg sync.WaitGroup
				for w := 0; w < clients; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						c := synth.New(200 + seed.Add(1))
						for range jobs {
							if _, err := s.Add(context.Background(), c.NewMemory()); err != nil {
								b.Error(err)
								return
							}
							n.Add(1)
						}
					}()
				}
				for b.Loop() {
					jobs <- struct{}{}
				}
				close(jobs)
				wg.Wait()
				b.ReportMetric(float64(n.Load())/time.Since(start).Seconds(), "adds/s")
			})
		}
	}
}

// firstSearch opens a store and times it until its first answered search.
func firstSearch(b *testing.B, e engine) (store.Store, time.Duration) {
	start := time.Now()
	s := e.open(b)
	if _, err := s.SearchLexical(context.Background(), store.Query{Workspace: "default", Limit: 10}, []string{"ka"}); err != nil {
		b.Fatal(err)
	}
	return s, time.Since(start)
}

func BenchmarkSearch(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("HEARTH_BENCH_MEMORIES")); err == nil && v > 0 {
		n = v
	}
	for _, e := range engines(b, false) {
		b.Run(fmt.Sprintf("%s/memories=%d", e.name, n), func(b *testing.B) {
			s := e.open(b)
			t0 := time.Now()
			synth.Fill(b, s, n)
			build := time.Since(t0)
			s.Close()
			if err := os.Remove(e.snapshot); err != nil {
				b.Fatal(err)
			}
			s, rebuild := firstSearch(b, e)
			s.Close() // saves the snapshot
			s, warm := firstSearch(b, e)
			defer s.Close()
			synth.BenchSearches(b, s)
			if e.name == "postgres" {
				// The same searches without the freshness probe, for the
				// decision record: what the probe's round trip costs.
				old := pgstore.SetProbeForTest(false)
				queries := synth.Queries(1000)
				var bare []time.Duration
				for j := range 2000 {
					bare = append(bare, synth.Search(b, s, queries, j))
				}
				pgstore.SetProbeForTest(old)
				slices.Sort(bare)
				b.ReportMetric(float64(bare[len(bare)/2].Microseconds())/1000, "noprobe-p50-ms")
				b.ReportMetric(float64(bare[len(bare)*99/100].Microseconds())/1000, "noprobe-p99-ms")
			}
			b.ReportMetric(build.Seconds(), "fill-s")
			b.ReportMetric(rebuild.Seconds(), "first-rebuild-s")
			b.ReportMetric(warm.Seconds(), "first-snapshot-s")
		})
	}
	// The same database, ranked by PostgreSQL's full-text search instead.
	b.Run(fmt.Sprintf("postgres-fulltext/memories=%d", n), func(b *testing.B) { fullText(b, dsn, synth.Queries(1000)) })
}

// fullText measures the alternative the decision record weighs:
// PostgreSQL's own full-text search (a GIN index over to_tsvector, ranked
// by ts_rank_cd, matching any query word) on the same queries: latency, and
// how many of 40 queries take over 3 s (they are cut off there).
func fullText(b *testing.B, dsn string, queries []string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	t0 := time.Now()
	if _, err := conn.Exec(ctx, `CREATE INDEX bench_fts ON hearth_chunks USING gin (to_tsvector('simple', text))`); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ANALYZE hearth_chunks; ANALYZE hearth_memories`); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(t0).Seconds(), "fts-index-s")
	if _, err := conn.Exec(ctx, `SET statement_timeout = '3s'`); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	timeouts := 0
	for i := range 40 {
		words := terms.Split(queries[i%len(queries)])
		tsq := strings.Join(words, " | ")
		start := time.Now()
		rows, err := conn.Query(ctx, `SELECT c.memory_id FROM hearth_chunks c JOIN hearth_memories m ON m.id = c.memory_id
			WHERE m.workspace = 'default' AND to_tsvector('simple', c.text) @@ to_tsquery('simple', $1)
			ORDER BY ts_rank_cd(to_tsvector('simple', c.text), to_tsquery('simple', $1)) DESC LIMIT 10`, tsq)
		if err == nil {
			_, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		}
		if err != nil {
			if !strings.Contains(err.Error(), "statement timeout") {
				b.Fatal(err)
			}
			timeouts++
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "fts-p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "fts-p90-ms")
	b.ReportMetric(float64(timeouts), "fts-over-3s")
	if _, err := conn.Exec(ctx, `DROP INDEX bench_fts`); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGraphWrite: durable create_entities (one new entity with an
// observation each) from 1 and 16 clients, both engines in one run.
func BenchmarkGraphWrite(b *testing.B) {
	for _, e := range engines(b, true) {
		for _, clients := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/clients=%d", e.name, clients), func(b *testing.B) {
				s := e.open(b)
				defer s.Close()
				g := s.(store.Graph)
				run := time.Now().UnixNano() // names new in every run: a repeated one would be ignored
				var next, n atomic.Int64
				start := time.Now()
				jobs := make(chan struct{})
				var wg sync.WaitGroup
				for w := 0; w < clients; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range jobs {
							i := next.Add(1)
							es := []store.Entity{{Name: fmt.Sprintf("bench-%d-%d-%d", run, clients, i), Type: "node", Observations: []string{fmt.Sprintf("observation %d", i)}}}
							if _, err := g.CreateEntities(context.Background(), "default", es); err != nil {
								b.Error(err)
								return
							}
							n.Add(1)
						}
					}()
				}
				for b.Loop() {
					jobs <- struct{}{}
				}
				close(jobs)
				wg.Wait()
				b.ReportMetric(float64(n.Load())/time.Since(start).Seconds(), "writes/s")
			})
		}
	}
}

// BenchmarkGraphSeenByAnother: the time from a graph write answered by one
// store to the other store reading it, two stores on one database: by
// LISTEN/NOTIFY alone (the probe off, polling the other's in-memory graph),
// and by the probe of the other's next read (the read's own latency).
func BenchmarkGraphSeenByAnother(b *testing.B) {
	srv := pgtest.Start(b, pgtest.Options{Durable: true})
	dsn := srv.DSN(srv.CreateDB(b))
	for _, probe := range []bool{false, true} {
		b.Run(map[bool]string{false: "notify", true: "probe"}[probe], func(b *testing.B) {
			defer pgstore.SetGraphProbeForTest(pgstore.SetGraphProbeForTest(probe))
			opts := pgstore.Options{Build: "bench", Poll: time.Hour}
			a, err := pgstore.Open(context.Background(), dsn, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			o, err := pgstore.Open(context.Background(), dsn, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer o.Close()
			ctx := context.Background()
			var took []time.Duration
			i, run := 0, time.Now().UnixNano() // names new in every run
			for b.Loop() {
				i++
				name := fmt.Sprintf("seen-%d-%d", run, i)
				if _, err := a.CreateEntities(ctx, "default", []store.Entity{{Name: name, Type: "node"}}); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				for {
					sg, err := o.OpenNodes(ctx, "default", []string{name})
					if err != nil {
						b.Fatal(err)
					}
					if len(sg.Entities) == 1 {
						break
					}
					if time.Since(start) > 5*time.Second {
						b.Fatalf("%s not seen within 5 s", name)
					}
					time.Sleep(100 * time.Microsecond)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// BenchmarkGraphImport: one Import of 100 000 entities (150 000
// observations, 100 000 relations) into a fresh store of each engine, and
// on PostgreSQL the time until a second store, open on the same database,
// reads the last entity (its probe replays the import from the tables).
func BenchmarkGraphImport(b *testing.B) {
	const n = 100000
	var g store.Subgraph
	for i := 0; i < n; i++ {
		obs := []string{fmt.Sprintf("entity %d was imported", i)}
		if i%2 == 0 {
			obs = append(obs, fmt.Sprintf("an even one, %d", i))
		}
		g.Entities = append(g.Entities, store.Entity{Name: fmt.Sprintf("entity-%d", i), Type: "thing", Observations: obs})
		g.Relations = append(g.Relations, store.Relation{From: fmt.Sprintf("entity-%d", i), To: fmt.Sprintf("entity-%d", (i*7+1)%n), Type: "links"})
	}
	for _, e := range engines(b, true) {
		b.Run(e.name, func(b *testing.B) {
			if b.N > 1 {
				b.Skip("one import a run: -benchtime 1x")
			}
			s := e.open(b)
			defer s.Close()
			start := time.Now()
			res, err := s.(store.Graph).Import(context.Background(), "default", g)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(time.Since(start).Seconds(), "import-s")
			if res.EntitiesCreated != n {
				b.Fatalf("imported %+v", res)
			}
			if e.name != "postgres" {
				return
			}
			// The snapshot file belongs to the first store: the second keeps none.
			o, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Build: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			defer o.Close()
			if _, err := o.LoadedFrom(context.Background()); err != nil {
				b.Fatal(err)
			}
			if _, err := s.(store.Graph).Import(context.Background(), "other", g); err != nil {
				b.Fatal(err)
			}
			start = time.Now()
			sg, err := o.OpenNodes(context.Background(), "other", []string{fmt.Sprintf("entity-%d", n-1)})
			if err != nil || len(sg.Entities) != 1 {
				b.Fatalf("the other store: %+v %v", sg, err)
			}
			b.ReportMetric(time.Since(start).Seconds(), "seen-by-another-s")
		})
	}
}
