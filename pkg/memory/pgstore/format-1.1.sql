-- Format 1.0 -> 1.1: the memory graph (graph.go, docs/decisions/0018 and
-- 0019). Only tables are added; nothing of 1.0 changes.
--
-- Entities, observations and relations get their keys from
-- hearth_graph_counters, whose row every graph write locks first and holds
-- to its commit: keys grow in commit order across every daemon, so a
-- read_graph cursor (the last key a page held) never skips a newer row, and
-- the rows a run of changes added are exactly the keys between the
-- counters before and after it. Names, types and observations may be longer
-- than a btree entry holds (1 000 and 100 000 characters), so uniqueness
-- and lookups go through their SHA-256 (the *_key columns, computed by
-- hearthd).

CREATE TABLE hearth_graph_counters (
	id          smallint PRIMARY KEY CHECK (id = 1),
	change      bigint   NOT NULL, -- the last hearth_graph_changes.seq
	entity      bigint   NOT NULL, -- the last key given to each kind
	observation bigint   NOT NULL,
	relation    bigint   NOT NULL
);
INSERT INTO hearth_graph_counters VALUES (1, 0, 0, 0, 0);

CREATE TABLE hearth_entities (
	id        bigint PRIMARY KEY,
	workspace text   NOT NULL,
	name      text   NOT NULL,
	type      text   NOT NULL,
	name_key  bytea  NOT NULL, -- sha256(name)
	UNIQUE (workspace, name_key)
);

CREATE TABLE hearth_observations (
	id        bigint PRIMARY KEY,
	entity_id bigint NOT NULL REFERENCES hearth_entities (id) ON DELETE CASCADE,
	text      text   NOT NULL,
	text_key  bytea  NOT NULL, -- sha256(text)
	UNIQUE (entity_id, text_key)
);

-- Relations name entities, which need not exist (as in the official memory
-- server): no foreign key.
CREATE TABLE hearth_relations (
	id         bigint PRIMARY KEY,
	workspace  text   NOT NULL,
	source     text   NOT NULL,
	target     text   NOT NULL,
	type       text   NOT NULL,
	source_key bytea  NOT NULL, -- sha256(source), as the entity's name_key
	target_key bytea  NOT NULL, -- sha256(target)
	triple_key bytea  NOT NULL, -- sha256(source NUL target NUL type)
	UNIQUE (workspace, triple_key)
);
CREATE INDEX hearth_relations_source ON hearth_relations (workspace, source_key);
CREATE INDEX hearth_relations_target ON hearth_relations (workspace, target_key);

-- Which entities each memory mentions: deleting either removes the link.
CREATE TABLE hearth_mentions (
	entity_id bigint NOT NULL REFERENCES hearth_entities (id) ON DELETE CASCADE,
	memory_id bigint NOT NULL REFERENCES hearth_memories (id) ON DELETE CASCADE,
	PRIMARY KEY (entity_id, memory_id)
);
CREATE INDEX hearth_mentions_memory ON hearth_mentions (memory_id);

-- The memories a graph build has extracted.
CREATE TABLE hearth_extracted (
	memory_id bigint PRIMARY KEY REFERENCES hearth_memories (id) ON DELETE CASCADE,
	extractor text   NOT NULL,
	at        bigint NOT NULL -- Unix ms
);

CREATE TABLE hearth_graph_builds (
	id        bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	workspace text    NOT NULL, -- '' for every workspace
	since     bigint,           -- Unix ms, NULL for any time
	extractor text    NOT NULL,
	started   bigint  NOT NULL,
	finished  bigint  NOT NULL,
	status    text    NOT NULL,
	memories  bigint  NOT NULL,
	entities  bigint  NOT NULL,
	relations bigint  NOT NULL,
	links     bigint  NOT NULL
);

-- The graph's change log, beside the memories' (hearth_changes): one row
-- per graph write that changed something, numbered in commit order. It
-- names what the write removed (a workspace's keys) and the counters after
-- it; what it added is read back from the tables by key. Every daemon
-- replays it into its in-memory graph (package graphindex).
CREATE TABLE hearth_graph_changes (
	seq                       bigint   PRIMARY KEY,
	workspace                 text     NOT NULL, -- of the removed keys
	gone_entities             bigint[] NOT NULL,
	gone_relations            bigint[] NOT NULL,
	gone_observations         bigint[] NOT NULL,
	gone_observation_entities bigint[] NOT NULL, -- the entity of each
	entity                    bigint   NOT NULL, -- hearth_graph_counters after it
	observation               bigint   NOT NULL,
	relation                  bigint   NOT NULL
);
