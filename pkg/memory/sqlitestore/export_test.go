package sqlitestore

import (
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
