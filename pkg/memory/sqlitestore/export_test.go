package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
)

// SetSchemaVersionForTest stamps a database as written by another build.
func SetSchemaVersionForTest(path string, v int) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, v))
	return err
}

// CreateAtVersionForTest creates a database in the format of schema version v,
// as an older build left it.
func CreateAtVersionForTest(path string, v int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(path, "_pragma=journal_mode(WAL)"))
	if err != nil {
		return nil, err
	}
	if err := migrateTo(context.Background(), db, v); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// ExecForTest runs one statement on the database at path.
func ExecForTest(path, stmt string) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(stmt)
	return err
}
