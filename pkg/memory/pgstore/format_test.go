package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hearth-mcp/hearth/pkg/memory/pgstore"
	"github.com/hearth-mcp/hearth/pkg/memory/pgstore/pgtest"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// dump is every hearth table's rows as text, to show nothing changed.
func dump(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT relname, relkind = 'S' FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'S') ORDER BY relname`)
	if err != nil {
		t.Fatal(err)
	}
	type rel struct {
		name string
		seq  bool
	}
	rels, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rel, error) {
		var x rel
		err := r.Scan(&x.name, &x.seq)
		return x, err
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range rels {
		n := r.name
		query := `SELECT coalesce(string_agg(t::text, '|' ORDER BY t::text), '') FROM %s t`
		if r.seq { // a sequence's row has no composite type: its last value stands for it
			query = `SELECT last_value::text FROM %s`
		}
		var text string
		if err := conn.QueryRow(ctx, fmt.Sprintf(query, pgx.Identifier{n}.Sanitize())).Scan(&text); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s: %s\n", n, text)
	}
	return b.String()
}

func exec(t *testing.T, dsn, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
}

// withData opens a fresh database once, so it holds the tables and a memory.
func withData(t *testing.T, srv *pgtest.Server) string {
	t.Helper()
	dsn := srv.DSN(srv.CreateDB(t))
	s, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Build: "test-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(context.Background(), store.NewMemory{Workspace: "default", Text: "kept as it was", Chunks: []string{"kept as it was"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return dsn
}

func refusal(t *testing.T, err error, reason string) *store.FormatError {
	t.Helper()
	var r *store.FormatError
	if !errors.As(err, &r) {
		t.Fatalf("err = %v, want a refusal (%s)", err, reason)
	}
	if r.Reason != reason {
		t.Fatalf("reason %s, want %s: %s", r.Reason, reason, r.Message)
	}
	return r
}

func TestGuardFreshDatabase(t *testing.T) {
	srv := pgtest.Shared(t)
	dsn := srv.DSN(srv.CreateDB(t))
	created, err := pgstore.Check(context.Background(), dsn, "test-1")
	if err != nil || !created {
		t.Fatalf("Check on a fresh database = %v, %v; want created", created, err)
	}
	if !strings.Contains(dump(t, dsn), "hearth_format: (1,"+pgstore.Format+",test-1,") {
		t.Fatalf("no marker written:\n%s", dump(t, dsn))
	}
	created, err = pgstore.Check(context.Background(), dsn, "test-2")
	if err != nil || created {
		t.Fatalf("second Check = %v, %v; want passed, not created", created, err)
	}
}

func TestGuardOtherFormat(t *testing.T) {
	srv := pgtest.Shared(t)
	for _, other := range []string{"0.9", "1.7", "2.0"} {
		t.Run(other, func(t *testing.T) {
			dsn := withData(t, srv)
			exec(t, dsn, `UPDATE hearth_format SET format = '`+other+`', written_by = 'hearthd-other'`)
			before := dump(t, dsn)
			_, err := pgstore.Check(context.Background(), dsn, "test-2")
			r := refusal(t, err, store.ReasonFormatMismatch)
			for _, want := range []string{other, pgstore.Format, "hearthd-other", "hearthd migrate", "Nothing was changed"} {
				if !strings.Contains(r.Message, want) {
					t.Errorf("message lacks %q: %s", want, r.Message)
				}
			}
			_, err = pgstore.Open(context.Background(), dsn, pgstore.Options{Build: "test-2"})
			if !errors.Is(err, store.ErrUnavailable) {
				t.Errorf("Open = %v, want ErrUnavailable", err)
			}
			refusal(t, err, store.ReasonFormatMismatch)
			// migrate converts only older formats, and has no step from any of these.
			_, err = pgstore.Migrate(context.Background(), dsn, "test-2", false)
			refusal(t, err, store.ReasonFormatMismatch)
			if after := dump(t, dsn); after != before {
				t.Fatalf("a refused database changed:\nbefore %s\nafter %s", before, after)
			}
		})
	}
}

func TestGuardDataWithoutMarker(t *testing.T) {
	srv := pgtest.Shared(t)
	dsn := withData(t, srv)
	exec(t, dsn, `DROP TABLE hearth_format`)
	before := dump(t, dsn)
	_, err := pgstore.Check(context.Background(), dsn, "test-2")
	r := refusal(t, err, store.ReasonNoMarker)
	if !strings.Contains(r.Message, "hearth_memories") || !strings.Contains(r.Message, "hearthd migrate --adopt") {
		t.Errorf("message: %s", r.Message)
	}
	_, err = pgstore.Migrate(context.Background(), dsn, "test-2", false)
	refusal(t, err, store.ReasonNoMarker)
	if after := dump(t, dsn); after != before {
		t.Fatalf("a refused database changed:\nbefore %s\nafter %s", before, after)
	}
	res, err := pgstore.Migrate(context.Background(), dsn, "test-2", true)
	if err != nil || !res.Adopted {
		t.Fatalf("migrate --adopt = %+v, %v", res, err)
	}
	s := open(t, dsn, pgstore.Options{Build: "test-2"})
	hits, err := s.SearchLexical(context.Background(), store.Query{Workspace: "default", Limit: 5}, []string{"kept"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("after adopting: hits %v, err %v", hits, err)
	}
}

func TestMigrate(t *testing.T) {
	srv := pgtest.Shared(t)
	dsn := srv.DSN(srv.CreateDB(t))
	res, err := pgstore.Migrate(context.Background(), dsn, "test-1", false)
	if err != nil || !res.Created {
		t.Fatalf("migrate on an empty database = %+v, %v; want created", res, err)
	}
	res, err = pgstore.Migrate(context.Background(), dsn, "test-1", false)
	if err != nil || res.Created || len(res.Steps) != 0 || !strings.Contains(res.String(), "nothing to do") {
		t.Fatalf("migrate again = %q, %v; want nothing to do", res, err)
	}
	// Tables of another application in the same database are not hearth's data.
	dsn2 := srv.DSN(srv.CreateDB(t))
	exec(t, dsn2, `CREATE TABLE memories (id int)`)
	if created, err := pgstore.Check(context.Background(), dsn2, "test-1"); err != nil || !created {
		t.Fatalf("Check beside another application's table = %v, %v", created, err)
	}
}

// TestNoPasswordInErrors: whatever fails, the password is not in the error.
func TestNoPasswordInErrors(t *testing.T) {
	srv := pgtest.Shared(t)
	const pw = "s3cret-Pw-42"
	for _, dsn := range []string{
		"postgres://hearth:" + pw + "@/no_such_db?host=" + srv.Dir + "&sslmode=disable",
		"host=" + srv.Dir + " user=hearth password=" + pw + " dbname=no_such_db sslmode=disable",
		"host=/nonexistent/dir user=hearth password=" + pw + " dbname=x sslmode=disable",
		"postgres://hearth:" + pw + "@/x?host=" + srv.Dir + "&sslmode=bogus",
		"host=" + srv.Dir + " password='" + pw,
	} {
		_, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Build: "test"})
		if err == nil {
			t.Fatalf("Open(%q) succeeded", dsn)
		}
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("Open: %v, want ErrUnavailable", err)
		}
		for _, e := range []error{err, func() error { _, err := pgstore.Check(context.Background(), dsn, "t"); return err }(),
			func() error { _, err := pgstore.Migrate(context.Background(), dsn, "t", false); return err }()} {
			if e == nil || strings.Contains(e.Error(), pw) {
				t.Errorf("error carries the password (or is nil): %v", e)
			}
		}
	}
}

// TestMigrateToGraph: a database of format 1.0 (memories only) is refused
// (exit 78, naming both formats and hearthd migrate) and left as it was;
// hearthd migrate adds the graph's tables in one step, and the store then
// opens with its memories and takes graph writes.
func TestMigrateToGraph(t *testing.T) {
	srv := pgtest.Shared(t)
	dsn := srv.DSN(srv.CreateDB(t))
	exec(t, dsn, pgstore.SchemaOfFormat10())
	exec(t, dsn, `INSERT INTO hearth_format (id, format, written_by, store_id) VALUES (1, '1.0', 'hearthd-1.0', 'old-store');
		UPDATE hearth_counters SET memory = 1, chunk = 1, change = 1;
		INSERT INTO hearth_memories VALUES (1, 'mem-1', 'default', 'a memory from format 1.0', '', '{}', 0, 0, 1);
		INSERT INTO hearth_chunks VALUES (1, 1, 0, 'a memory from format 1.0', NULL, NULL);
		INSERT INTO hearth_changes VALUES (1, 1, false)`)
	before := dump(t, dsn)
	_, err := pgstore.Check(context.Background(), dsn, "test-2")
	r := refusal(t, err, store.ReasonFormatMismatch)
	for _, want := range []string{"format 1.0", "format " + pgstore.Format, "hearthd migrate"} {
		if !strings.Contains(r.Message, want) {
			t.Errorf("message lacks %q: %s", want, r.Message)
		}
	}
	if after := dump(t, dsn); after != before {
		t.Fatalf("a refused database changed:\nbefore %s\nafter %s", before, after)
	}
	res, err := pgstore.Migrate(context.Background(), dsn, "test-2", false)
	if err != nil || res.From != "1.0" || len(res.Steps) != 2 || !strings.Contains(res.String(), "graph") || !strings.Contains(res.String(), "pruned") {
		t.Fatalf("migrate from 1.0 = %q, %v", res, err)
	}
	s := open(t, dsn, pgstore.Options{Build: "test-2"})
	ctx := context.Background()
	hits, err := s.SearchLexical(ctx, store.Query{Workspace: "default", Limit: 5}, []string{"format"})
	if err != nil || len(hits) != 1 || hits[0].Memory.ID != "mem-1" {
		t.Fatalf("the memory of format 1.0 after migrating: %+v, %v", hits, err)
	}
	if _, err := s.CreateEntities(ctx, "default", []store.Entity{{Name: "Alice", Type: "person", Observations: []string{"migrated"}}}); err != nil {
		t.Fatal(err)
	}
	rec, err := s.ApplyExtractions(ctx, []store.Extraction{{MemoryID: "mem-1", Extractor: "test", Entities: []store.Entity{{Name: "Alice", Type: "person"}}}})
	if err != nil || rec.Links != 1 {
		t.Fatalf("linking the old memory: %+v, %v", rec, err)
	}
	if res, err := pgstore.Migrate(ctx, dsn, "test-2", false); err != nil || len(res.Steps) != 0 {
		t.Fatalf("migrate again = %q, %v; want nothing to do", res, err)
	}
}
