package sqlitestore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestInsertRowsGroups: more rows than one statement may bind go in several
// statements, none lost or repeated.
func TestInsertRowsGroups(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)`); err != nil {
		t.Fatal(err)
	}
	const n = maxParams/2*2 + 7 // two full statements and a remainder
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{i + 1, "x"}
	}
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := insertRows(context.Background(), tx, `INSERT INTO t(a, b) VALUES `, rows); err != nil {
		t.Fatal(err)
	}
	if err := insertRows(context.Background(), tx, `INSERT INTO t(a, b) VALUES `, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var count, sum int64
	if err := db.QueryRow(`SELECT count(*), sum(a) FROM t`).Scan(&count, &sum); err != nil {
		t.Fatal(err)
	}
	if count != n || sum != int64(n)*(n+1)/2 {
		t.Fatalf("count %d sum %d, want %d rows 1..%d", count, sum, n, n)
	}
}
