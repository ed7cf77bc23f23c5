package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/memory/graphindex"
	"github.com/hearth-mcp/hearth/pkg/memory/graphwrite"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/memory/storecore"
)

// The memory graph (store.Graph). Writes are operations queued for the
// writer goroutine, committed with whatever adds and other operations wait
// beside them (each in its own savepoint, so one refused operation does not
// undo another), and applied to the in-memory graph (package graphindex)
// before they are answered. Reads are served from that index; only the links
// between memories and entities, the extraction marks and the build records
// are read from the file.

var _ store.Graph = (*Store)(nil)

// runOp runs op inside a savepoint. opErr is the operation's own failure
// (its savepoint rolled back, the batch goes on); fatal is a failure of the
// transaction itself.
func runOp(ctx context.Context, tx *sql.Tx, op *storecore.Op[*sql.Tx]) (changes []*graphindex.Change, opErr, fatal error) {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT op`); err != nil {
		return nil, nil, err
	}
	changes, opErr = op.Run(ctx, tx)
	if opErr != nil {
		if _, err := tx.ExecContext(ctx, `ROLLBACK TO op`); err != nil {
			return nil, nil, err
		}
		var missing *store.MissingEntityError
		if !errors.As(opErr, &missing) {
			opErr = fail(ctx, "graph write", opErr)
		}
		changes = nil
	}
	if _, err := tx.ExecContext(ctx, `RELEASE op`); err != nil {
		return nil, nil, err
	}
	return changes, opErr, nil
}

// insertEntities inserts the entities whose name is new in ws and returns
// their rows by name.
func insertEntities(ctx context.Context, tx *sql.Tx, ws string, es []store.Entity) (map[string]graphindex.EntityRow, error) {
	rows := make([][]any, len(es))
	for i, e := range es {
		rows[i] = []any{ws, e.Name, e.Type}
	}
	created := map[string]graphindex.EntityRow{}
	err := insertReturning(ctx, tx, `INSERT INTO entities(workspace, name, type) VALUES `, ` ON CONFLICT DO NOTHING RETURNING id, name, type`, rows,
		func(r *sql.Rows) error {
			var e graphindex.EntityRow
			if err := r.Scan(&e.Key, &e.Name, &e.Type); err != nil {
				return err
			}
			created[e.Name] = e
			return nil
		})
	return created, err
}

// insertObservations inserts the observations each entity (by key) lacks and
// returns the rows added.
func insertObservations(ctx context.Context, tx *sql.Tx, obs []graphindex.ObservationRow) ([]graphindex.ObservationRow, error) {
	rows := make([][]any, len(obs))
	for i, o := range obs {
		rows[i] = []any{o.Entity, o.Text}
	}
	var added []graphindex.ObservationRow
	err := insertReturning(ctx, tx, `INSERT INTO observations(entity_id, text) VALUES `, ` ON CONFLICT DO NOTHING RETURNING id, entity_id, text`, rows,
		func(r *sql.Rows) error {
			var o graphindex.ObservationRow
			if err := r.Scan(&o.Key, &o.Entity, &o.Text); err != nil {
				return err
			}
			added = append(added, o)
			return nil
		})
	return added, err
}

// insertRelations inserts the relations that are new in ws.
func insertRelations(ctx context.Context, tx *sql.Tx, ws string, rs []store.Relation) ([]graphindex.RelationRow, error) {
	rows := make([][]any, len(rs))
	for i, r := range rs {
		rows[i] = []any{ws, r.From, r.To, r.Type}
	}
	var created []graphindex.RelationRow
	err := insertReturning(ctx, tx, `INSERT INTO relations(workspace, source, target, type) VALUES `, ` ON CONFLICT DO NOTHING RETURNING id, source, target, type`, rows,
		func(r *sql.Rows) error {
			var rel graphindex.RelationRow
			if err := r.Scan(&rel.Key, &rel.From, &rel.To, &rel.Type); err != nil {
				return err
			}
			created = append(created, rel)
			return nil
		})
	return created, err
}

// txRows are the graph's row operations in one SQLite transaction, for
// package graphwrite.
type txRows struct{ tx *sql.Tx }

var _ graphwrite.Rows = txRows{}

func (r txRows) EntityKeys(ctx context.Context, ws string, names []string) (map[string]int64, error) {
	return entityKeys(ctx, r.tx, ws, names)
}

func (r txRows) InsertEntities(ctx context.Context, ws string, es []store.Entity) (map[string]graphindex.EntityRow, error) {
	return insertEntities(ctx, r.tx, ws, es)
}

func (r txRows) InsertObservations(ctx context.Context, obs []graphindex.ObservationRow) ([]graphindex.ObservationRow, error) {
	return insertObservations(ctx, r.tx, obs)
}

func (r txRows) InsertRelations(ctx context.Context, ws string, rs []store.Relation) ([]graphindex.RelationRow, error) {
	return insertRelations(ctx, r.tx, ws, rs)
}

func (r txRows) DeleteEntities(ctx context.Context, ws string, names []string) (relations, entities []int64, err error) {
	for rest := names; len(rest) > 0; {
		n := min(len(rest), maxParams/2-1)
		batch := anys(rest[:n])
		args := append(append([]any{ws}, batch...), batch...)
		gone, err := deleteReturning(ctx, r.tx, `DELETE FROM relations WHERE workspace = ? AND (source IN (`+placeholders(n)+`) OR target IN (`+placeholders(n)+`)) RETURNING id`, args...)
		if err != nil {
			return nil, nil, err
		}
		relations = append(relations, gone...)
		// Observations and links go with their entity (ON DELETE CASCADE).
		gone, err = deleteReturning(ctx, r.tx, `DELETE FROM entities WHERE workspace = ? AND name IN (`+placeholders(n)+`) RETURNING id`, append([]any{ws}, batch...)...)
		if err != nil {
			return nil, nil, err
		}
		entities = append(entities, gone...)
		rest = rest[n:]
	}
	return relations, entities, nil
}

func (r txRows) DeleteObservations(ctx context.Context, obs []graphindex.ObservationRow) ([]graphindex.ObservationRow, error) {
	var out []graphindex.ObservationRow
	for len(obs) > 0 {
		// One statement per run of the same entity, of at most maxParams texts.
		key, n := obs[0].Entity, 1
		for n < len(obs) && n < maxParams-1 && obs[n].Entity == key {
			n++
		}
		args := []any{key}
		for _, o := range obs[:n] {
			args = append(args, o.Text)
		}
		gone, err := deleteReturning(ctx, r.tx, `DELETE FROM observations WHERE entity_id = ? AND text IN (`+placeholders(n)+`) RETURNING id`, args...)
		if err != nil {
			return nil, err
		}
		for _, id := range gone {
			out = append(out, graphindex.ObservationRow{Entity: key, Key: id})
		}
		obs = obs[n:]
	}
	return out, nil
}

func (r txRows) DeleteRelations(ctx context.Context, ws string, rs []store.Relation) ([]int64, error) {
	var out []int64
	for _, rel := range rs {
		gone, err := deleteReturning(ctx, r.tx, `DELETE FROM relations WHERE workspace = ? AND source = ? AND target = ? AND type = ? RETURNING id`,
			ws, rel.From, rel.To, rel.Type)
		if err != nil {
			return nil, err
		}
		out = append(out, gone...)
	}
	return out, nil
}

// entityKeys returns the keys of the entities of ws among names.
func entityKeys(ctx context.Context, tx *sql.Tx, ws string, names []string) (map[string]int64, error) {
	out := make(map[string]int64, len(names))
	for len(names) > 0 {
		n := min(len(names), maxParams-1)
		args := make([]any, 0, n+1)
		args = append(args, ws)
		for _, name := range names[:n] {
			args = append(args, name)
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, name FROM entities WHERE workspace = ? AND name IN (?`+strings.Repeat(`, ?`, n-1)+`)`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var key int64
			var name string
			if err := rows.Scan(&key, &name); err != nil {
				rows.Close()
				return nil, err
			}
			out[name] = key
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		names = names[n:]
	}
	return out, nil
}

// deleteReturning runs a DELETE ... RETURNING id and collects the ids.
func deleteReturning(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

func placeholders(n int) string { return "?" + strings.Repeat(", ?", n-1) }

func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// scopeSQL appends the conditions of scope on the memories table m.
func scopeSQL(scope store.ExtractScope, where *strings.Builder, args *[]any) {
	if scope.Workspace != "" {
		where.WriteString(` AND m.workspace = ?`)
		*args = append(*args, scope.Workspace)
	}
	if !scope.Since.IsZero() {
		where.WriteString(` AND m.ts >= ?`)
		*args = append(*args, scope.Since.UnixMilli())
	}
}

// PendingExtraction lists memories no build has extracted, oldest first.
func (s *Store) PendingExtraction(ctx context.Context, scope store.ExtractScope, limit int) ([]store.Memory, error) {
	if s.IsClosed() {
		return nil, storecore.ErrClosed
	}
	var where strings.Builder
	var args []any
	scopeSQL(scope, &where, &args)
	args = append(args, limit)
	rows, err := s.r.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories m
		WHERE NOT EXISTS (SELECT 1 FROM extracted x WHERE x.memory_id = m.id)`+where.String()+` ORDER BY m.id LIMIT ?`, args...)
	if err != nil {
		return nil, fail(ctx, "pending extraction", err)
	}
	defer rows.Close()
	var out []store.Memory
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, fail(ctx, "pending extraction", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fail(ctx, "pending extraction", err)
	}
	return out, nil
}

// CountPending counts the memories of scope no build has extracted.
func (s *Store) CountPending(ctx context.Context, scope store.ExtractScope) (int64, error) {
	if s.IsClosed() {
		return 0, storecore.ErrClosed
	}
	var where strings.Builder
	var args []any
	scopeSQL(scope, &where, &args)
	var n int64
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM memories m
		WHERE NOT EXISTS (SELECT 1 FROM extracted x WHERE x.memory_id = m.id)`+where.String(), args...).Scan(&n); err != nil {
		return 0, fail(ctx, "count pending", err)
	}
	return n, nil
}

// ForgetExtraction clears the extraction marks of scope.
func (s *Store) ForgetExtraction(ctx context.Context, scope store.ExtractScope) error {
	var where strings.Builder
	var args []any
	scopeSQL(scope, &where, &args)
	return s.Write(ctx, "", false, func(ctx context.Context, tx *sql.Tx) ([]*graphindex.Change, error) {
		_, err := tx.ExecContext(ctx, `DELETE FROM extracted WHERE memory_id IN (SELECT m.id FROM memories m WHERE 1`+where.String()+`)`, args...)
		return nil, err
	})
}

func (r txRows) Memory(ctx context.Context, id string) (key int64, ws string, found bool, err error) {
	// SQLite has one writer: no delete can come between.
	err = r.tx.QueryRowContext(ctx, `SELECT id, workspace FROM memories WHERE uid = ?`, id).Scan(&key, &ws)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", false, nil
	}
	return key, ws, err == nil, err
}

func (r txRows) Link(ctx context.Context, memory int64, entities []int64) (int64, error) {
	links := make([][]any, len(entities))
	for i, e := range entities {
		links[i] = []any{e, memory}
	}
	return insertCount(ctx, r.tx, `INSERT OR IGNORE INTO mentions(entity_id, memory_id) VALUES `, links)
}

func (r txRows) MarkExtracted(ctx context.Context, memory int64, extractor string, at int64) error {
	_, err := r.tx.ExecContext(ctx, `INSERT OR REPLACE INTO extracted(memory_id, extractor, at) VALUES (?, ?, ?)`, memory, extractor, at)
	return err
}

// insertCount is insertRows that counts the rows inserted.
func insertCount(ctx context.Context, tx *sql.Tx, head string, rows [][]any) (int64, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	var total int64
	width := len(rows[0])
	group := "(?" + strings.Repeat(", ?", width-1) + ")"
	for per := maxParams / width; len(rows) > 0; {
		n := min(per, len(rows))
		args := make([]any, 0, n*width)
		for _, r := range rows[:n] {
			args = append(args, r...)
		}
		res, err := tx.ExecContext(ctx, head+group+strings.Repeat(", "+group, n-1), args...)
		if err != nil {
			return 0, err
		}
		k, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		total += k
		rows = rows[n:]
	}
	return total, nil
}

// RecordBuild keeps a build's record.
func (s *Store) RecordBuild(ctx context.Context, b store.BuildRecord) error {
	var since any
	if !b.Scope.Since.IsZero() {
		since = b.Scope.Since.UnixMilli()
	}
	return s.Write(ctx, "", false, func(ctx context.Context, tx *sql.Tx) ([]*graphindex.Change, error) {
		_, err := tx.ExecContext(ctx, `INSERT INTO graph_builds(workspace, since, extractor, started, finished, status, memories, entities, relations, links)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, b.Scope.Workspace, since, b.Extractor, b.Started.UnixMilli(), b.Finished.UnixMilli(), b.Status,
			b.Memories, b.EntitiesCreated, b.RelationsCreated, b.Links)
		return nil, err
	})
}

// mentions names the entities each memory (of ids, unique) mentions.
func (s *Store) mentions(ctx context.Context, ids []string) (map[string][]string, error) {
	out := map[string][]string{}
	for len(ids) > 0 {
		n := min(len(ids), maxParams)
		rows, err := s.r.QueryContext(ctx, `SELECT m.uid, e.name FROM memories m JOIN mentions x ON x.memory_id = m.id JOIN entities e ON e.id = x.entity_id
			WHERE m.uid IN (`+placeholders(n)+`) ORDER BY m.uid, e.name`, anys(ids[:n])...)
		if err != nil {
			return nil, fail(ctx, "mentions", err)
		}
		for rows.Next() {
			var id, name string
			if err := rows.Scan(&id, &name); err != nil {
				rows.Close()
				return nil, fail(ctx, "mentions", err)
			}
			out[id] = append(out[id], name)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fail(ctx, "mentions", err)
		}
		ids = ids[n:]
	}
	return out, nil
}

// mentionedIn lists the newest memories mentioning each entity, in one
// query for all of them.
func (s *Store) mentionedIn(ctx context.Context, ws string, names []string, limit int) (map[string][]store.MemoryRef, error) {
	out := map[string][]store.MemoryRef{}
	for len(names) > 0 {
		n := min(len(names), maxParams-4)
		args := append([]any{store.PreviewLen, ws}, anys(names[:n])...)
		args = append(args, limit)
		rows, err := s.r.QueryContext(ctx, `SELECT name, uid, preview, ts FROM (
				SELECT e.name AS name, m.uid AS uid, substr(m.text, 1, ?) AS preview, m.ts AS ts,
					row_number() OVER (PARTITION BY e.id ORDER BY m.ts DESC, m.id DESC) AS k
				FROM entities e JOIN mentions x ON x.entity_id = e.id JOIN memories m ON m.id = x.memory_id
				WHERE e.workspace = ? AND e.name IN (`+placeholders(n)+`))
			WHERE k <= ? ORDER BY name, k`, args...)
		if err != nil {
			return nil, fail(ctx, "mentioned in", err)
		}
		for rows.Next() {
			var name string
			var ref store.MemoryRef
			var ts int64
			if err := rows.Scan(&name, &ref.ID, &ref.Text, &ts); err != nil {
				rows.Close()
				return nil, fail(ctx, "mentioned in", err)
			}
			ref.Time = time.UnixMilli(ts).UTC()
			out[name] = append(out[name], ref)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fail(ctx, "mentioned in", err)
		}
		names = names[n:]
	}
	return out, nil
}

// GraphStats summarizes the graph of ws ("" for all).
func (s *Store) GraphStats(ctx context.Context, ws string, top int) (store.GraphStats, error) {
	var st store.GraphStats
	if err := s.Readable(ctx, "graph stats"); err != nil {
		return st, err
	}
	c := s.GraphIndex().Counts(ws)
	st.Entities, st.Relations, st.Observations = c.Entities, c.Relations, c.Observations
	wsCond, args := "", []any{}
	if ws != "" {
		wsCond, args = " AND m.workspace = ?", []any{ws}
	}
	entCond := ""
	if ws != "" {
		entCond = " WHERE e.workspace = ?"
	}
	q := `SELECT
		(SELECT count(*) FROM mentions x JOIN entities e ON e.id = x.entity_id` + entCond + `),
		(SELECT count(*) FROM memories m WHERE EXISTS (SELECT 1 FROM extracted x WHERE x.memory_id = m.id)` + wsCond + `),
		(SELECT count(*) FROM memories m WHERE NOT EXISTS (SELECT 1 FROM extracted x WHERE x.memory_id = m.id)` + wsCond + `)`
	if err := s.r.QueryRowContext(ctx, q, append(append(append([]any{}, args...), args...), args...)...).Scan(&st.Links, &st.Extracted, &st.Pending); err != nil {
		return st, fail(ctx, "graph stats", err)
	}
	var b store.BuildRecord
	var since sql.NullInt64
	var started, finished int64
	buildCond := ""
	bargs := []any{}
	if ws != "" {
		buildCond, bargs = " WHERE workspace IN ('', ?)", []any{ws}
	}
	err := s.r.QueryRowContext(ctx, `SELECT workspace, since, extractor, started, finished, status, memories, entities, relations, links
		FROM graph_builds`+buildCond+` ORDER BY id DESC LIMIT 1`, bargs...).
		Scan(&b.Scope.Workspace, &since, &b.Extractor, &started, &finished, &b.Status, &b.Memories, &b.EntitiesCreated, &b.RelationsCreated, &b.Links)
	switch {
	case err == nil:
		if since.Valid {
			b.Scope.Since = time.UnixMilli(since.Int64).UTC()
		}
		b.Started, b.Finished = time.UnixMilli(started).UTC(), time.UnixMilli(finished).UTC()
		st.LastBuild = &b
	case !errors.Is(err, sql.ErrNoRows):
		return st, fail(ctx, "graph stats", err)
	}
	if top > 0 {
		rows, err := s.r.QueryContext(ctx, `SELECT e.workspace, e.name, count(*) AS n FROM mentions x JOIN entities e ON e.id = x.entity_id`+entCond+`
			GROUP BY x.entity_id ORDER BY n DESC, e.name LIMIT ?`, append(args, top)...)
		if err != nil {
			return st, fail(ctx, "graph stats", err)
		}
		defer rows.Close()
		for rows.Next() {
			var m store.Mention
			if err := rows.Scan(&m.Workspace, &m.Name, &m.Memories); err != nil {
				return st, fail(ctx, "graph stats", err)
			}
			st.MostMentioned = append(st.MostMentioned, m)
		}
		if err := rows.Err(); err != nil {
			return st, fail(ctx, "graph stats", err)
		}
	}
	return st, nil
}

// loadGraph builds the in-memory graph from the file, in key order.
func loadGraph(ctx context.Context, db *sql.DB) (*graphindex.Index, error) {
	ix := graphindex.New()
	type wsRows struct {
		ents []graphindex.EntityRow
		obs  []graphindex.ObservationRow
		rels []graphindex.RelationRow
	}
	byWS := map[string]*wsRows{}
	get := func(ws string) *wsRows {
		w := byWS[ws]
		if w == nil {
			w = &wsRows{}
			byWS[ws] = w
		}
		return w
	}
	entWS := map[int64]string{}
	if err := each(ctx, db, `SELECT id, workspace, name, type FROM entities ORDER BY id`, func(r *sql.Rows) error {
		var e graphindex.EntityRow
		var ws string
		if err := r.Scan(&e.Key, &ws, &e.Name, &e.Type); err != nil {
			return err
		}
		entWS[e.Key] = ws
		get(ws).ents = append(get(ws).ents, e)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := each(ctx, db, `SELECT id, entity_id, text FROM observations ORDER BY id`, func(r *sql.Rows) error {
		var o graphindex.ObservationRow
		if err := r.Scan(&o.Key, &o.Entity, &o.Text); err != nil {
			return err
		}
		w := get(entWS[o.Entity])
		w.obs = append(w.obs, o)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := each(ctx, db, `SELECT id, workspace, source, target, type FROM relations ORDER BY id`, func(r *sql.Rows) error {
		var rel graphindex.RelationRow
		var ws string
		if err := r.Scan(&rel.Key, &ws, &rel.From, &rel.To, &rel.Type); err != nil {
			return err
		}
		get(ws).rels = append(get(ws).rels, rel)
		return nil
	}); err != nil {
		return nil, err
	}
	for ws, w := range byWS {
		ix.Load(ws, w.ents, w.obs, w.rels)
	}
	return ix, nil
}

func each(ctx context.Context, db *sql.DB, query string, fn func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
