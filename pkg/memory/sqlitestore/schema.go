package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
)

// SchemaVersion is the on-disk format this build writes, kept in PRAGMA
// user_version. Entry i of migrations moves a database from version i to i+1
// inside one transaction, so a crash mid-migration leaves the old format whole.
const SchemaVersion = 4

var migrations = []string{
	// 0 → 1: memories, their tags, their chunks and the chunks' full-text index.
	// (A migration is never edited once released: databases out there ran it.)
	`
CREATE TABLE memories (
	id        INTEGER PRIMARY KEY,
	uid       TEXT    NOT NULL UNIQUE,
	workspace TEXT    NOT NULL,
	text      TEXT    NOT NULL,
	source    TEXT    NOT NULL DEFAULT '',
	tags      TEXT    NOT NULL DEFAULT '[]', -- JSON array, as given
	ts        INTEGER NOT NULL,              -- metadata time, Unix ms
	added     INTEGER NOT NULL,              -- when stored, Unix ms
	chunks    INTEGER NOT NULL
);
CREATE INDEX memories_workspace_ts ON memories(workspace, ts);
CREATE INDEX memories_ts ON memories(ts);

CREATE TABLE memory_tags (
	tag       TEXT    NOT NULL,
	memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
	PRIMARY KEY (tag, memory_id)
) WITHOUT ROWID;
CREATE INDEX memory_tags_memory ON memory_tags(memory_id);

CREATE TABLE chunks (
	id        INTEGER PRIMARY KEY,
	memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
	seq       INTEGER NOT NULL,
	text      TEXT    NOT NULL,
	embedding BLOB,   -- little-endian float32s, sqlite-vec's layout
	model     TEXT    -- the model that computed embedding
);
CREATE INDEX chunks_memory ON chunks(memory_id);
CREATE INDEX chunks_pending ON chunks(id) WHERE embedding IS NULL;

-- External-content FTS5 index over chunks.text. New chunks are indexed by the
-- store with one INSERT ... SELECT per transaction, not by a trigger: FTS5
-- flushes its pending terms at every statement savepoint, and a per-row
-- trigger made that one flush (and index segment) per chunk. Deletes use a
-- trigger, so a cascade delete from memories keeps the index in step.
CREATE VIRTUAL TABLE chunks_fts USING fts5(
	text, content='chunks', content_rowid='id',
	tokenize='unicode61 remove_diacritics 2'
);
-- Per-term document counts, to leave out of a query the terms too common to rank.
CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab(chunks_fts, row);
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
	INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
`,
	// 1 → 2: lexical ranking moved to the in-memory index (package lexindex,
	// docs/decisions/0010): the FTS5 index and what kept it are dropped.
	`
DROP TRIGGER chunks_fts_delete;
DROP TABLE chunks_vocab;
DROP TABLE chunks_fts;
`,
	// 2 → 3: the change log and the store's id, which stamp the index
	// snapshot (docs/decisions/0019): one row per memory added or deleted,
	// numbered in commit order. Memory ids are no longer reused after a
	// delete (the next id is past every id the log names).
	`
CREATE TABLE changes (
	seq       INTEGER PRIMARY KEY,
	memory_id INTEGER NOT NULL,
	deleted   INTEGER NOT NULL
);
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO meta(key, value) VALUES ('store_id', lower(hex(randomblob(16))));
`,
	// 3 → 4: the memory graph (graph.go, docs/decisions/0018): entities and
	// their observations, relations between entity names (which need not
	// exist, as in the official memory server), the links between memories
	// and the entities they mention, which memories a build has extracted,
	// and the builds. Only tables are added: nothing older changes.
	// AUTOINCREMENT keeps keys from being reused, so a read_graph cursor
	// (the last key a page held) never skips a newer row.
	`
CREATE TABLE entities (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	workspace TEXT    NOT NULL,
	name      TEXT    NOT NULL,
	type      TEXT    NOT NULL,
	UNIQUE (workspace, name)
);

CREATE TABLE observations (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
	text      TEXT    NOT NULL,
	UNIQUE (entity_id, text)
);

CREATE TABLE relations (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	workspace TEXT    NOT NULL,
	source    TEXT    NOT NULL, -- entity names, as the official server keeps them
	target    TEXT    NOT NULL,
	type      TEXT    NOT NULL,
	UNIQUE (workspace, source, target, type)
);
CREATE INDEX relations_target ON relations(workspace, target);

CREATE TABLE mentions (
	entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
	memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
	PRIMARY KEY (entity_id, memory_id)
) WITHOUT ROWID;
CREATE INDEX mentions_memory ON mentions(memory_id);

CREATE TABLE extracted (
	memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
	extractor TEXT    NOT NULL,
	at        INTEGER NOT NULL -- Unix ms
);

CREATE TABLE graph_builds (
	id        INTEGER PRIMARY KEY,
	workspace TEXT    NOT NULL, -- '' for every workspace
	since     INTEGER,          -- Unix ms, NULL for any time
	extractor TEXT    NOT NULL,
	started   INTEGER NOT NULL,
	finished  INTEGER NOT NULL,
	status    TEXT    NOT NULL,
	memories  INTEGER NOT NULL,
	entities  INTEGER NOT NULL,
	relations INTEGER NOT NULL,
	links     INTEGER NOT NULL
);
`,
}

// migrate brings db to SchemaVersion, refusing a database written by a newer build.
func migrate(ctx context.Context, db *sql.DB) error {
	if len(migrations) != SchemaVersion {
		panic("sqlitestore: SchemaVersion and migrations disagree")
	}
	return migrateTo(ctx, db, SchemaVersion)
}

// migrateTo brings db to version target (tests build old databases with it).
func migrateTo(ctx context.Context, db *sql.DB, target int) error {
	var v int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > SchemaVersion {
		return fmt.Errorf("schema version %d is newer than this build's %d", v, SchemaVersion)
	}
	for ; v < target; v++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate to %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate to %d: %w", v+1, err)
		}
		// PRAGMA takes no bound parameters; v+1 is our own integer.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, v+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate to %d: %w", v+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate to %d: %w", v+1, err)
		}
	}
	return nil
}
