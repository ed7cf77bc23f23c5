-- The memory store's tables on PostgreSQL, created by the format guard in
-- one transaction when a database is fresh (format.go keeps the format's
-- version: this file is format 1.0, and a later format adds a migration step
-- there rather than editing this). Every table and sequence of hearth is
-- named hearth_*, so one database (or schema) can hold other things too,
-- and the guard tells hearth's data from anything else's.

-- The format marker: one row.
CREATE TABLE hearth_format (
	id         smallint    PRIMARY KEY CHECK (id = 1),
	format     text        NOT NULL,          -- MAJOR.MINOR
	written_by text        NOT NULL,          -- the hearthd version that wrote it
	store_id   text        NOT NULL,          -- random, names this store for index snapshots
	written_at timestamptz NOT NULL DEFAULT now()
);

-- The last number given out of each kind, in one row. Every write takes
-- this row's lock first and keeps it until it commits, so writers from
-- every daemon commit one at a time, in the order of their numbers: a
-- reader that sees change n has seen every change before it.
CREATE TABLE hearth_counters (
	id     smallint PRIMARY KEY CHECK (id = 1),
	memory bigint   NOT NULL,
	chunk  bigint   NOT NULL,
	change bigint   NOT NULL
);
INSERT INTO hearth_counters VALUES (1, 0, 0, 0);

CREATE TABLE hearth_memories (
	id        bigint  PRIMARY KEY,
	uid       text    NOT NULL UNIQUE,
	workspace text    NOT NULL,
	text      text    NOT NULL,
	source    text    NOT NULL DEFAULT '',
	tags      text[]  NOT NULL DEFAULT '{}', -- as given, in order
	ts        bigint  NOT NULL,              -- metadata time, Unix ms
	added     bigint  NOT NULL,              -- when stored, Unix ms
	chunks    integer NOT NULL
);
CREATE INDEX hearth_memories_workspace_ts ON hearth_memories (workspace, ts);

CREATE TABLE hearth_chunks (
	id        bigint  PRIMARY KEY,
	memory_id bigint  NOT NULL REFERENCES hearth_memories (id) ON DELETE CASCADE,
	seq       integer NOT NULL,
	text      text    NOT NULL,
	embedding bytea,  -- little-endian float32s
	model     text    -- the model that computed embedding
);
CREATE INDEX hearth_chunks_memory ON hearth_chunks (memory_id);
CREATE INDEX hearth_chunks_pending ON hearth_chunks (id) WHERE embedding IS NULL;

-- The change log every daemon catches up from (docs/decisions/0019): one
-- row per memory added or deleted, numbered in commit order.
CREATE TABLE hearth_changes (
	seq       bigint  PRIMARY KEY,
	memory_id bigint  NOT NULL,
	deleted   boolean NOT NULL
);
