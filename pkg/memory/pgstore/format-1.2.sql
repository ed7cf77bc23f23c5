-- Format 1.1 -> 1.2: the change logs are pruned (pgstore's prune.go,
-- docs/decisions/0022-pruned-change-logs.md). Only tables are added;
-- nothing of 1.1 changes.
--
-- Every daemon reports, every minute or so, the last change of each log
-- its index and its graph reflect. What every daemon reported within the
-- lease has applied is deleted from the logs, and hearth_pruned says up to
-- where: a daemon whose next change is gone rebuilds from the tables, as at
-- its first start, rather than reading a log with a hole in it.

CREATE TABLE hearth_daemons (
	id            text        PRIMARY KEY, -- one per open store, new at every start
	applied       bigint      NOT NULL,    -- the last hearth_changes.seq its index reflects
	graph_applied bigint      NOT NULL,    -- the last hearth_graph_changes.seq its graph reflects
	seen          timestamptz NOT NULL     -- the server's time of its last report
);

CREATE TABLE hearth_pruned (
	id            smallint PRIMARY KEY CHECK (id = 1),
	changes       bigint   NOT NULL, -- every hearth_changes row up to this seq is gone
	graph_changes bigint   NOT NULL  -- every hearth_graph_changes row up to this seq is gone
);
INSERT INTO hearth_pruned VALUES (1, 0, 0);
