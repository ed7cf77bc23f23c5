//go:build unix

package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/guard"
	"github.com/hearth-mcp/hearth/pkg/memory"
	"github.com/hearth-mcp/hearth/pkg/memory/pgstore"
	"github.com/hearth-mcp/hearth/pkg/memory/pgstore/pgtest"
	"github.com/hearth-mcp/hearth/pkg/memory/sqlitestore"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// BenchmarkFirstSearchAfterStart: the time from starting `hearthd stdio`
// on a data directory holding n memories (HEARTH_BENCH_MEMORIES, default
// 100 000) to its first answered search_memory, initialize included: once
// with no index snapshot (the index is rebuilt from the store, as every
// start did before snapshots) and once with the snapshot the first run
// left, on SQLite and on PostgreSQL in one run. Goal: at most 100 ms at
// 100 000 memories.
func BenchmarkFirstSearchAfterStart(b *testing.B) {
	build(b)
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("HEARTH_BENCH_MEMORIES")); err == nil && v > 0 {
		n = v
	}
	sentences := corpusSentences(n)
	fill := func(st store.Store) { fillStore(b, st, sentences, 32) }
	// start runs hearthd stdio and times it to the first answered search.
	start := func(home string, env ...string) time.Duration {
		cmd := exec.Command(bins.hearthd, "stdio")
		cmd.Env = append(append(os.Environ(), "HEARTH_HOME="+home, "HEARTH_LOG_LEVEL=warn", "HEARTH_EMBED_URL=", "HEARTH_EMBED_MODEL=",
			"HOME="+b.TempDir(), "HEARTH_STORE_URL="), env...)
		t0 := time.Now()
		c, in := spawnConn(b, cmd)
		c.initialize(b)
		c.roundTrip(b, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search_memory","arguments":{"query":"staging database"}}}`)
		took := time.Since(t0)
		if r := string(c.reply()); !strings.Contains(r, `"memory_id"`) {
			b.Fatalf("search_memory: %.300s", r)
		}
		in.Close()
		cmd.Wait() // it saves the snapshot as it closes
		return took
	}

	type engine struct {
		name     string
		snapshot string
		env      []string
	}
	var engines []engine
	liteHome := b.TempDir()
	if _, err := guard.Check(liteHome, "bench"); err != nil {
		b.Fatal(err)
	}
	st, err := sqlitestore.Open(context.Background(), filepath.Join(liteHome, memory.StoreFile))
	if err != nil {
		b.Fatal(err)
	}
	fill(st)
	engines = append(engines, engine{"sqlite", filepath.Join(liteHome, "memory.index"), nil})

	pgHome := b.TempDir()
	if pgtest.Bin() != "" {
		srv := pgtest.Start(b, pgtest.Options{})
		dsn := srv.DSN(srv.CreateDB(b))
		if _, err := guard.Check(pgHome, "bench"); err != nil {
			b.Fatal(err)
		}
		pst, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Build: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		fill(pst)
		engines = append(engines, engine{"postgres", filepath.Join(pgHome, memory.PGSnapshotFile), []string{"HEARTH_STORE_URL=" + dsn}})
	} else {
		b.Log("PostgreSQL is not installed: measuring SQLite alone")
	}
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			home := liteHome
			if e.name == "postgres" {
				home = pgHome
			}
			var cold, warm []time.Duration
			for b.Loop() {
				os.Remove(e.snapshot)
				cold = append(cold, start(home, e.env...))
				if _, err := os.Stat(e.snapshot); err != nil {
					b.Fatalf("no snapshot after a daemon closed: %v", err)
				}
				warm = append(warm, start(home, e.env...))
			}
			quantiles(b, "rebuild-", cold)
			quantiles(b, "snapshot-", warm)
		})
	}
}
