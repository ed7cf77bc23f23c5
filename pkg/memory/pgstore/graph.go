package pgstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/memory/graphindex"
	"github.com/hearth-mcp/hearth/pkg/memory/graphwrite"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/memory/storecore"
)

// The memory graph (store.Graph) on PostgreSQL, with the SQLite store's
// semantics (docs/decisions/0018-memory-graph.md) and the memories' way of
// reaching every daemon (docs/decisions/0019-many-daemons-one-database.md).
//
// Writes are operations queued for this daemon's graph writer, which
// group-commits whatever waits: one transaction that first locks the one
// row of hearth_graph_counters, then runs each operation in its own
// savepoint (one refused operation, observations for a missing entity,
// undoes nothing else). Keys come from that row, so they grow in commit
// order across every daemon. Each operation that changed something adds a
// row to hearth_graph_changes naming what it removed and the counters after
// it, and the transaction NOTIFYs.
//
// Every daemon serves reads from its in-memory graph (package graphindex),
// which changes only in log order: a writer applies its own changes before
// it answers; the others replay the log when notified, when polled, and
// before every read, whose probe asks the log for its last number. A read
// thus sees every graph write committed before it started, on any daemon.
// The links between memories and entities, the extraction marks and the
// build records are read from the database.

var _ store.Graph = (*Store)(nil)

// longOpTimeout bounds a batch holding an import (one transaction however
// large the file).
const longOpTimeout = 5 * time.Minute

// graphCounters are the last keys given out and the last change logged.
type graphCounters struct {
	change, entity, observation, relation int64
}

// graphTx is one operation's view of the batch's transaction: its
// savepoint and the counters it takes keys from.
type graphTx struct {
	tx  pgx.Tx
	ctr *graphCounters
}

var _ graphwrite.Rows = (*graphTx)(nil)

// keys returns n new keys of the kind *last counts.
func keys(last *int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		*last++
		out[i] = *last
	}
	return out
}

// hash is the key the tables find a name, type or observation by.
func hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func hashes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = hash(s)
	}
	return out
}

// tripleKey is a relation's key. PostgreSQL text holds no NUL, so NUL
// separates the parts unambiguously.
func tripleKey(r store.Relation) []byte { return hash(r.From + "\x00" + r.To + "\x00" + r.Type) }

// maxGraphBatch bounds one group commit of graph writes: each runs in a
// subtransaction, and past 64 of them a backend's cache of subtransaction
// ids overflows, which slows every other session's snapshots.
const maxGraphBatch = 64

// graphWriter group-commits graph writes and replays the graph log when it
// has news.
func (s *Store) graphWriter() {
	defer s.stopped.Done()
	if !s.AwaitLoaded() {
		return // Write answers the load's error; nothing reaches s.Ops
	}
	s.Serve(storecore.Loop[*graphTx]{Ops: true, Max: maxGraphBatch, Wake: s.gwake, Poll: s.opts.Poll, CatchUp: s.graphCatchUpLogged,
		Commit: func(_ []*storecore.AddRequest, ops []*storecore.Op[*graphTx]) { s.commitOps(ops) }})
}

func (s *Store) graphCatchUpLogged() {
	ctx, cancel := bounded(context.Background())
	defer cancel()
	if err := s.graphCatchUp(ctx); err != nil {
		s.Log.Warn("memory: catching up with the graph log failed; will retry", zap.Error(s.fail(ctx, "graph catch up", err)))
	}
}

// logged is one logged change of this daemon's: its number and what it did.
type logged struct {
	seq     int64
	changes []*graphindex.Change
}

// commitOps runs a batch of graph writes in one transaction, each in a
// savepoint of its own: an operation that fails (observations for a missing
// entity, or text the server refuses) is rolled back alone, its keys given
// back, and the batch goes on.
func (s *Store) commitOps(batch []*storecore.Op[*graphTx]) {
	live := storecore.LiveOps(batch)
	timeout := opTimeout
	for _, op := range live {
		if op.Long {
			timeout = longOpTimeout
		}
	}
	if len(live) == 0 {
		return
	}
	// Not bound to any one caller's context: one client cancelling must
	// not roll back another's write.
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	opErrs := make([]error, len(live))
	var mine []logged
	var ctr graphCounters
	err := func() error {
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(context.Background())
		if err := tx.QueryRow(ctx, `SELECT change, entity, observation, relation FROM hearth_graph_counters WHERE id = 1 FOR UPDATE`).
			Scan(&ctr.change, &ctr.entity, &ctr.observation, &ctr.relation); err != nil {
			return err
		}
		start := ctr
		var logRows [][]any
		for i, op := range live {
			// Without arguments pgx sends this in one round trip.
			savepoint := `SAVEPOINT op`
			if i > 0 {
				savepoint = `RELEASE SAVEPOINT op; SAVEPOINT op`
			}
			if _, err := tx.Exec(ctx, savepoint); err != nil {
				return err
			}
			before := ctr
			changes, opErr := op.Run(ctx, &graphTx{tx: tx, ctr: &ctr})
			var row []any
			if opErr == nil {
				if changes = slices.DeleteFunc(changes, (*graphindex.Change).Empty); len(changes) > 0 {
					ctr.change++
					row, opErr = logRow(op.WS, ctr, changes)
				}
			}
			if opErr != nil {
				ctr = before
				if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT op`); err != nil {
					return err
				}
				var missing *store.MissingEntityError
				if !errors.As(opErr, &missing) {
					opErr = s.fail(ctx, "graph write", opErr)
				}
				opErrs[i] = opErr
				continue
			}
			if row != nil {
				logRows = append(logRows, row)
				mine = append(mine, logged{ctr.change, changes})
			}
		}
		if len(logRows) > 0 {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"hearth_graph_changes"}, []string{"seq", "workspace", "gone_entities", "gone_relations",
				"gone_observations", "gone_observation_entities", "entity", "observation", "relation"}, pgx.CopyFromRows(logRows)); err != nil {
				return err
			}
		}
		// Nothing logged, nothing inserted: the keys handed out are given
		// back with the transaction, as no row holds them.
		if ctr.change != start.change {
			if _, err := tx.Exec(ctx, `WITH c AS (UPDATE hearth_graph_counters SET change = $1, entity = $2, observation = $3, relation = $4 WHERE id = 1 RETURNING change)
				SELECT pg_notify($5, 'g' || change) FROM c`, ctr.change, ctr.entity, ctr.observation, ctr.relation, notifyChannel); err != nil {
				return err
			}
		}
		return tx.Commit(ctx)
	}()
	if err == nil && len(mine) > 0 {
		// In the graph before anyone is answered: an answered write is read
		// back. Should the log not be readable right after the commit, the
		// writes are still answered (they are durable; an error would
		// invite a retry), and the next catch-up applies them.
		if cerr := s.applyOwn(ctx, mine, ctr); cerr != nil {
			s.Log.Warn("memory: applying committed graph writes failed; will catch up", zap.Error(s.fail(ctx, "graph catch up", cerr)))
		}
	}
	for i, op := range live {
		if err != nil {
			op.Done <- s.fail(ctx, "graph write", err)
		} else {
			op.Done <- opErrs[i]
		}
	}
}

// logRow is the log row of one operation: the keys it removed (of workspace
// ws: only operations of one workspace remove) and the counters after it.
func logRow(ws string, ctr graphCounters, changes []*graphindex.Change) ([]any, error) {
	goneE, goneR, goneO, goneOE := []int64{}, []int64{}, []int64{}, []int64{}
	for _, c := range changes {
		if len(c.GoneEntities)+len(c.GoneRelations)+len(c.GoneObservations) > 0 && c.Workspace != ws {
			return nil, fmt.Errorf("graph log: an operation of workspace %q removed keys of %q", ws, c.Workspace)
		}
		goneE = append(goneE, c.GoneEntities...)
		goneR = append(goneR, c.GoneRelations...)
		for _, o := range c.GoneObservations {
			goneO, goneOE = append(goneO, o.Key), append(goneOE, o.Entity)
		}
	}
	return []any{ctr.change, ws, goneE, goneR, goneO, goneOE, ctr.entity, ctr.observation, ctr.relation}, nil
}

// applyOwn puts this daemon's committed changes into the graph. When the
// graph is at the change before them, they are applied as made, with no
// read; otherwise (another daemon's changes came between) the log is
// replayed from the database, theirs included.
func (s *Store) applyOwn(ctx context.Context, mine []logged, ctr graphCounters) error {
	s.graphing.Lock()
	defer s.graphing.Unlock()
	last := mine[len(mine)-1].seq
	switch {
	case s.gApplied >= last:
		return nil // a read's catch-up was first
	case s.gApplied == mine[0].seq-1:
		// Graph writes of every daemon are serialized by the counters'
		// lock: nothing committed between this batch's first and last change.
		for _, l := range mine {
			for _, c := range l.changes {
				s.GraphIndex().Apply(c)
			}
		}
		s.gApplied, s.gHigh = last, ctr
		return nil
	}
	return s.graphCatchUpLocked(ctx)
}

// graphCatchUp replays the graph log after the last change applied.
func (s *Store) graphCatchUp(ctx context.Context) error {
	s.graphing.Lock()
	defer s.graphing.Unlock()
	return s.graphCatchUpLocked(ctx)
}

// graphCatchUpLocked reads the log after the last change applied and the
// rows those changes added, in one snapshot of the database, and applies
// them. Keys are never reused, so the order of a run of changes can be
// folded: what a change added and a later one removed is not in the
// snapshot, and every removal is applied before every addition.
func (s *Store) graphCatchUpLocked(ctx context.Context) error {
	for {
		n, err := s.graphCatchUpOnce(ctx)
		if errors.Is(err, errPruned) {
			// Down or silent past the lease: reloaded from the tables, as
			// at a first start.
			s.Log.Warn("memory: the graph log was pruned past this daemon's graph; reloading it from the tables", zap.Int64("applied", s.gApplied))
			if err := s.reloadGraph(ctx); err != nil {
				return err
			}
			continue
		}
		if err != nil || n < catchUpBatch {
			return err
		}
	}
}

func (s *Store) graphCatchUpOnce(ctx context.Context) (int, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.Background())
	var pruned int64
	if err := tx.QueryRow(ctx, `SELECT graph_changes FROM hearth_pruned WHERE id = 1`).Scan(&pruned); err != nil {
		return 0, err
	}
	if pruned > s.gApplied {
		return 0, errPruned
	}
	rows, err := tx.Query(ctx, `SELECT seq, workspace, gone_entities, gone_relations, gone_observations, gone_observation_entities, entity, observation, relation
		FROM hearth_graph_changes WHERE seq > $1 ORDER BY seq LIMIT $2`, s.gApplied, catchUpBatch)
	if err != nil {
		return 0, err
	}
	byWS := map[string]*graphindex.Change{}
	change := func(ws string) *graphindex.Change {
		c := byWS[ws]
		if c == nil {
			c = &graphindex.Change{Workspace: ws}
			byWS[ws] = c
		}
		return c
	}
	n := 0
	var to graphCounters
	for rows.Next() {
		var ws string
		var goneE, goneR, goneO, goneOE []int64
		if err := rows.Scan(&to.change, &ws, &goneE, &goneR, &goneO, &goneOE, &to.entity, &to.observation, &to.relation); err != nil {
			rows.Close()
			return 0, err
		}
		n++
		if len(goneE)+len(goneR)+len(goneO) > 0 {
			c := change(ws)
			c.GoneEntities = append(c.GoneEntities, goneE...)
			c.GoneRelations = append(c.GoneRelations, goneR...)
			for i, k := range goneO {
				c.GoneObservations = append(c.GoneObservations, graphindex.ObservationRow{Entity: goneOE[i], Key: k})
			}
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	if err := readAdded(ctx, tx, s.gHigh, to, change); err != nil {
		return 0, err
	}
	for _, c := range byWS {
		s.GraphIndex().Apply(c)
	}
	s.gApplied, s.gHigh = to.change, to
	return n, nil
}

// readAdded reads the entities, observations and relations with keys after
// from and up to to, into each workspace's change.
func readAdded(ctx context.Context, tx pgx.Tx, from, to graphCounters, change func(ws string) *graphindex.Change) error {
	if to.entity > from.entity {
		rows, err := tx.Query(ctx, `SELECT id, workspace, name, type FROM hearth_entities WHERE id > $1 AND id <= $2 ORDER BY id`, from.entity, to.entity)
		if err != nil {
			return err
		}
		var e graphindex.EntityRow
		var ws string
		if _, err := pgx.ForEachRow(rows, []any{&e.Key, &ws, &e.Name, &e.Type}, func() error {
			c := change(ws)
			c.NewEntities = append(c.NewEntities, e)
			return nil
		}); err != nil {
			return err
		}
	}
	if to.observation > from.observation {
		rows, err := tx.Query(ctx, `SELECT o.id, o.entity_id, o.text, e.workspace FROM hearth_observations o JOIN hearth_entities e ON e.id = o.entity_id
			WHERE o.id > $1 AND o.id <= $2 ORDER BY o.id`, from.observation, to.observation)
		if err != nil {
			return err
		}
		var o graphindex.ObservationRow
		var ws string
		if _, err := pgx.ForEachRow(rows, []any{&o.Key, &o.Entity, &o.Text, &ws}, func() error {
			c := change(ws)
			c.NewObservations = append(c.NewObservations, o)
			return nil
		}); err != nil {
			return err
		}
	}
	if to.relation > from.relation {
		rows, err := tx.Query(ctx, `SELECT id, workspace, source, target, type FROM hearth_relations WHERE id > $1 AND id <= $2 ORDER BY id`, from.relation, to.relation)
		if err != nil {
			return err
		}
		var r graphindex.RelationRow
		var ws string
		if _, err := pgx.ForEachRow(rows, []any{&r.Key, &ws, &r.From, &r.To, &r.Type}, func() error {
			c := change(ws)
			c.NewRelations = append(c.NewRelations, r)
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// loadGraph builds the in-memory graph from the tables and the counters,
// in one snapshot of the database.
func (s *Store) loadGraph(ctx context.Context) error {
	s.graphing.Lock()
	defer s.graphing.Unlock()
	return s.reloadGraph(ctx)
}

// reloadGraph is loadGraph for a caller holding graphing.
func (s *Store) reloadGraph(ctx context.Context) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	var to graphCounters
	if err := tx.QueryRow(ctx, `SELECT change, entity, observation, relation FROM hearth_graph_counters WHERE id = 1`).
		Scan(&to.change, &to.entity, &to.observation, &to.relation); err != nil {
		return err
	}
	byWS := map[string]*graphindex.Change{}
	if err := readAdded(ctx, tx, graphCounters{}, to, func(ws string) *graphindex.Change {
		c := byWS[ws]
		if c == nil {
			c = &graphindex.Change{Workspace: ws}
			byWS[ws] = c
		}
		return c
	}); err != nil {
		return err
	}
	ix := graphindex.New()
	for ws, c := range byWS {
		ix.Load(ws, c.NewEntities, c.NewObservations, c.NewRelations)
	}
	s.SetGraphIndex(ix)
	s.gApplied, s.gHigh = to.change, to
	return nil
}

// probeGraphReads: every graph read first asks the graph log for its last
// change, as every search asks the memories' log (probeSearches).
var probeGraphReads = true

// probeGraph catches the graph up if the log has changes it lacks, so a
// read sees every graph write committed before it started, on any daemon;
// with the server down it fails rather than answer from a past state.
func (s *Store) probeGraph(ctx context.Context, op string) error {
	if !probeGraphReads {
		return nil
	}
	var last int64
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM hearth_graph_changes`).Scan(&last); err != nil {
		return s.fail(ctx, op, err)
	}
	s.graphing.Lock()
	behind := last > s.gApplied
	s.graphing.Unlock()
	if !behind {
		return nil
	}
	if err := s.graphCatchUp(ctx); err != nil {
		return s.fail(ctx, op, err)
	}
	return nil
}

// InsertEntities inserts the entities whose name is new in ws and returns
// their rows by name.
func (w *graphTx) InsertEntities(ctx context.Context, ws string, es []store.Entity) (map[string]graphindex.EntityRow, error) {
	created := map[string]graphindex.EntityRow{}
	if len(es) == 0 {
		return created, nil
	}
	names, types := make([]string, len(es)), make([]string, len(es))
	for i, e := range es {
		names[i], types[i] = e.Name, e.Type
	}
	rows, err := w.tx.Query(ctx, `INSERT INTO hearth_entities (id, workspace, name, type, name_key)
		SELECT id, $2, name, type, name_key FROM unnest($1::bigint[], $3::text[], $4::text[], $5::bytea[]) AS u(id, name, type, name_key)
		ON CONFLICT DO NOTHING RETURNING id, name, type`, keys(&w.ctr.entity, len(es)), ws, names, types, hashes(names))
	if err != nil {
		return nil, err
	}
	var e graphindex.EntityRow
	_, err = pgx.ForEachRow(rows, []any{&e.Key, &e.Name, &e.Type}, func() error {
		created[e.Name] = e
		return nil
	})
	return created, err
}

// InsertObservations inserts the observations each entity (by key) lacks and
// returns the rows added.
func (w *graphTx) InsertObservations(ctx context.Context, obs []graphindex.ObservationRow) ([]graphindex.ObservationRow, error) {
	if len(obs) == 0 {
		return nil, nil
	}
	ents, texts := make([]int64, len(obs)), make([]string, len(obs))
	for i, o := range obs {
		ents[i], texts[i] = o.Entity, o.Text
	}
	rows, err := w.tx.Query(ctx, `INSERT INTO hearth_observations (id, entity_id, text, text_key)
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bytea[])
		ON CONFLICT DO NOTHING RETURNING id, entity_id, text`, keys(&w.ctr.observation, len(obs)), ents, texts, hashes(texts))
	if err != nil {
		return nil, err
	}
	var added []graphindex.ObservationRow
	var o graphindex.ObservationRow
	_, err = pgx.ForEachRow(rows, []any{&o.Key, &o.Entity, &o.Text}, func() error {
		added = append(added, o)
		return nil
	})
	return added, err
}

// InsertRelations inserts the relations that are new in ws.
func (w *graphTx) InsertRelations(ctx context.Context, ws string, rs []store.Relation) ([]graphindex.RelationRow, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	from, to, typ := make([]string, len(rs)), make([]string, len(rs)), make([]string, len(rs))
	triples := make([][]byte, len(rs))
	for i, r := range rs {
		from[i], to[i], typ[i], triples[i] = r.From, r.To, r.Type, tripleKey(r)
	}
	rows, err := w.tx.Query(ctx, `INSERT INTO hearth_relations (id, workspace, source, target, type, source_key, target_key, triple_key)
		SELECT id, $2, source, target, type, source_key, target_key, triple_key
		FROM unnest($1::bigint[], $3::text[], $4::text[], $5::text[], $6::bytea[], $7::bytea[], $8::bytea[]) AS u(id, source, target, type, source_key, target_key, triple_key)
		ON CONFLICT DO NOTHING RETURNING id, source, target, type`, keys(&w.ctr.relation, len(rs)), ws, from, to, typ, hashes(from), hashes(to), triples)
	if err != nil {
		return nil, err
	}
	var created []graphindex.RelationRow
	var r graphindex.RelationRow
	_, err = pgx.ForEachRow(rows, []any{&r.Key, &r.From, &r.To, &r.Type}, func() error {
		created = append(created, r)
		return nil
	})
	return created, err
}

// EntityKeys returns the keys of the entities of ws among names.
func (w *graphTx) EntityKeys(ctx context.Context, ws string, names []string) (map[string]int64, error) {
	out := make(map[string]int64, len(names))
	if len(names) == 0 {
		return out, nil
	}
	rows, err := w.tx.Query(ctx, `SELECT id, name FROM hearth_entities WHERE workspace = $1 AND name_key = ANY($2::bytea[])`, ws, hashes(names))
	if err != nil {
		return nil, err
	}
	var key int64
	var name string
	_, err = pgx.ForEachRow(rows, []any{&key, &name}, func() error {
		out[name] = key
		return nil
	})
	return out, err
}

// DeleteEntities deletes the relations naming names, then the entities.
func (w *graphTx) DeleteEntities(ctx context.Context, ws string, names []string) (relations, entities []int64, err error) {
	nameKeys := hashes(names)
	if relations, err = ids(ctx, w.tx, `DELETE FROM hearth_relations WHERE workspace = $1 AND (source_key = ANY($2::bytea[]) OR target_key = ANY($2::bytea[])) RETURNING id`,
		ws, nameKeys); err != nil {
		return nil, nil, err
	}
	// Observations and links go with their entity (ON DELETE CASCADE).
	if entities, err = ids(ctx, w.tx, `DELETE FROM hearth_entities WHERE workspace = $1 AND name_key = ANY($2::bytea[]) RETURNING id`, ws, nameKeys); err != nil {
		return nil, nil, err
	}
	return relations, entities, nil
}

// DeleteObservations deletes observations by entity and text, in one statement.
func (w *graphTx) DeleteObservations(ctx context.Context, obs []graphindex.ObservationRow) ([]graphindex.ObservationRow, error) {
	ents, texts := make([]int64, len(obs)), make([][]byte, len(obs))
	for i, o := range obs {
		ents[i], texts[i] = o.Entity, hash(o.Text)
	}
	rows, err := w.tx.Query(ctx, `DELETE FROM hearth_observations o USING unnest($1::bigint[], $2::bytea[]) AS d(entity_id, text_key)
		WHERE o.entity_id = d.entity_id AND o.text_key = d.text_key RETURNING o.id, o.entity_id`, ents, texts)
	if err != nil {
		return nil, err
	}
	var out []graphindex.ObservationRow
	var o graphindex.ObservationRow
	_, err = pgx.ForEachRow(rows, []any{&o.Key, &o.Entity}, func() error {
		out = append(out, o)
		return nil
	})
	return out, err
}

// DeleteRelations deletes relations by their triple's key.
func (w *graphTx) DeleteRelations(ctx context.Context, ws string, rs []store.Relation) ([]int64, error) {
	triples := make([][]byte, len(rs))
	for i, r := range rs {
		triples[i] = tripleKey(r)
	}
	return ids(ctx, w.tx, `DELETE FROM hearth_relations WHERE workspace = $1 AND triple_key = ANY($2::bytea[]) RETURNING id`, ws, triples)
}

// ids collects the first column of a query's rows.
func ids(ctx context.Context, tx pgx.Tx, query string, args ...any) ([]int64, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// scopeSQL appends the conditions of scope on the memories table m.
func scopeSQL(scope store.ExtractScope, where *strings.Builder, args *[]any) {
	if scope.Workspace != "" {
		*args = append(*args, scope.Workspace)
		fmt.Fprintf(where, ` AND m.workspace = $%d`, len(*args))
	}
	if !scope.Since.IsZero() {
		*args = append(*args, scope.Since.UnixMilli())
		fmt.Fprintf(where, ` AND m.ts >= $%d`, len(*args))
	}
}

// PendingExtraction lists memories no build has extracted, oldest first.
func (s *Store) PendingExtraction(ctx context.Context, scope store.ExtractScope, limit int) ([]store.Memory, error) {
	if s.IsClosed() {
		return nil, storecore.ErrClosed
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	var where strings.Builder
	var args []any
	scopeSQL(scope, &where, &args)
	args = append(args, limit)
	rows, err := s.pool.Query(ctx, `SELECT `+memoryColumns+` FROM hearth_memories m
		WHERE NOT EXISTS (SELECT 1 FROM hearth_extracted x WHERE x.memory_id = m.id)`+where.String()+fmt.Sprintf(` ORDER BY m.id LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, s.fail(ctx, "pending extraction", err)
	}
	defer rows.Close()
	var out []store.Memory
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, s.fail(ctx, "pending extraction", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(ctx, "pending extraction", err)
	}
	return out, nil
}

// CountPending counts the memories of scope no build has extracted.
func (s *Store) CountPending(ctx context.Context, scope store.ExtractScope) (int64, error) {
	if s.IsClosed() {
		return 0, storecore.ErrClosed
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	var where strings.Builder
	var args []any
	scopeSQL(scope, &where, &args)
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM hearth_memories m
		WHERE NOT EXISTS (SELECT 1 FROM hearth_extracted x WHERE x.memory_id = m.id)`+where.String(), args...).Scan(&n); err != nil {
		return 0, s.fail(ctx, "count pending", err)
	}
	return n, nil
}

// ForgetExtraction clears the extraction marks of scope. The in-memory
// graph holds no marks: this is one statement of its own.
func (s *Store) ForgetExtraction(ctx context.Context, scope store.ExtractScope) error {
	if err := s.Writable(ctx); err != nil {
		return err
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	var where strings.Builder
	var args []any
	scopeSQL(scope, &where, &args)
	if _, err := s.pool.Exec(ctx, `DELETE FROM hearth_extracted x USING hearth_memories m WHERE m.id = x.memory_id`+where.String(), args...); err != nil {
		return s.fail(ctx, "forget extraction", err)
	}
	return nil
}

// Memory finds a memory and locks it (FOR KEY SHARE): a delete of it, on
// any daemon, cannot commit between this read and the links.
func (w *graphTx) Memory(ctx context.Context, id string) (key int64, ws string, found bool, err error) {
	err = w.tx.QueryRow(ctx, `SELECT id, workspace FROM hearth_memories WHERE uid = $1 FOR KEY SHARE`, id).Scan(&key, &ws)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, "", false, nil
	}
	return key, ws, err == nil, err
}

// Link links entities to a memory.
func (w *graphTx) Link(ctx context.Context, memory int64, entities []int64) (int64, error) {
	tag, err := w.tx.Exec(ctx, `INSERT INTO hearth_mentions (entity_id, memory_id) SELECT e, $2 FROM unnest($1::bigint[]) AS e ON CONFLICT DO NOTHING`, entities, memory)
	return tag.RowsAffected(), err
}

// MarkExtracted records a memory's extraction.
func (w *graphTx) MarkExtracted(ctx context.Context, memory int64, extractor string, at int64) error {
	_, err := w.tx.Exec(ctx, `INSERT INTO hearth_extracted (memory_id, extractor, at) VALUES ($1, $2, $3)
		ON CONFLICT (memory_id) DO UPDATE SET extractor = excluded.extractor, at = excluded.at`, memory, extractor, at)
	return err
}

// RecordBuild keeps a build's record.
func (s *Store) RecordBuild(ctx context.Context, b store.BuildRecord) error {
	if err := s.Writable(ctx); err != nil {
		return err
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	var since *int64
	if !b.Scope.Since.IsZero() {
		ms := b.Scope.Since.UnixMilli()
		since = &ms
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO hearth_graph_builds (workspace, since, extractor, started, finished, status, memories, entities, relations, links)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, b.Scope.Workspace, since, b.Extractor, b.Started.UnixMilli(), b.Finished.UnixMilli(), b.Status,
		b.Memories, b.EntitiesCreated, b.RelationsCreated, b.Links); err != nil {
		return s.fail(ctx, "record build", err)
	}
	return nil
}

// mentions names the entities each memory (of ids, unique) mentions.
func (s *Store) mentions(ctx context.Context, ids []string) (map[string][]string, error) {
	out := map[string][]string{}
	ctx, cancel := bounded(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT m.uid, e.name FROM hearth_memories m JOIN hearth_mentions x ON x.memory_id = m.id JOIN hearth_entities e ON e.id = x.entity_id
		WHERE m.uid = ANY($1::text[]) ORDER BY m.uid, e.name COLLATE "C"`, ids)
	if err != nil {
		return nil, s.fail(ctx, "mentions", err)
	}
	var id, name string
	if _, err := pgx.ForEachRow(rows, []any{&id, &name}, func() error {
		out[id] = append(out[id], name)
		return nil
	}); err != nil {
		return nil, s.fail(ctx, "mentions", err)
	}
	return out, nil
}

// mentionedIn lists the newest memories mentioning each entity, in one
// query for all of them.
func (s *Store) mentionedIn(ctx context.Context, ws string, names []string, limit int) (map[string][]store.MemoryRef, error) {
	out := map[string][]store.MemoryRef{}
	ctx, cancel := bounded(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT name, uid, preview, ts FROM (
			SELECT e.name AS name, m.uid AS uid, substr(m.text, 1, $1) AS preview, m.ts AS ts,
				row_number() OVER (PARTITION BY e.id ORDER BY m.ts DESC, m.id DESC) AS k
			FROM hearth_entities e JOIN hearth_mentions x ON x.entity_id = e.id JOIN hearth_memories m ON m.id = x.memory_id
			WHERE e.workspace = $2 AND e.name_key = ANY($3::bytea[])) AS ranked
		WHERE k <= $4 ORDER BY name COLLATE "C", k`, store.PreviewLen, ws, hashes(names), limit)
	if err != nil {
		return nil, s.fail(ctx, "mentioned in", err)
	}
	var name string
	var ref store.MemoryRef
	var ts int64
	if _, err := pgx.ForEachRow(rows, []any{&name, &ref.ID, &ref.Text, &ts}, func() error {
		ref.Time = time.UnixMilli(ts).UTC()
		out[name] = append(out[name], ref)
		return nil
	}); err != nil {
		return nil, s.fail(ctx, "mentioned in", err)
	}
	return out, nil
}

// GraphStats summarizes the graph of ws ("" for all).
func (s *Store) GraphStats(ctx context.Context, ws string, top int) (store.GraphStats, error) {
	var st store.GraphStats
	ctx, cancel := bounded(ctx)
	defer cancel()
	if err := s.Readable(ctx, "graph stats"); err != nil {
		return st, err
	}
	c := s.GraphIndex().Counts(ws)
	st.Entities, st.Relations, st.Observations = c.Entities, c.Relations, c.Observations
	// $1 is ws; "" means every workspace.
	if err := s.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM hearth_mentions x JOIN hearth_entities e ON e.id = x.entity_id WHERE $1 = '' OR e.workspace = $1),
		(SELECT count(*) FROM hearth_memories m WHERE EXISTS (SELECT 1 FROM hearth_extracted x WHERE x.memory_id = m.id) AND ($1 = '' OR m.workspace = $1)),
		(SELECT count(*) FROM hearth_memories m WHERE NOT EXISTS (SELECT 1 FROM hearth_extracted x WHERE x.memory_id = m.id) AND ($1 = '' OR m.workspace = $1))`, ws).
		Scan(&st.Links, &st.Extracted, &st.Pending); err != nil {
		return st, s.fail(ctx, "graph stats", err)
	}
	var b store.BuildRecord
	var since *int64
	var started, finished int64
	err := s.pool.QueryRow(ctx, `SELECT workspace, since, extractor, started, finished, status, memories, entities, relations, links
		FROM hearth_graph_builds WHERE $1 = '' OR workspace IN ('', $1) ORDER BY id DESC LIMIT 1`, ws).
		Scan(&b.Scope.Workspace, &since, &b.Extractor, &started, &finished, &b.Status, &b.Memories, &b.EntitiesCreated, &b.RelationsCreated, &b.Links)
	switch {
	case err == nil:
		if since != nil {
			b.Scope.Since = time.UnixMilli(*since).UTC()
		}
		b.Started, b.Finished = time.UnixMilli(started).UTC(), time.UnixMilli(finished).UTC()
		st.LastBuild = &b
	case !errors.Is(err, pgx.ErrNoRows):
		return st, s.fail(ctx, "graph stats", err)
	}
	if top > 0 {
		rows, err := s.pool.Query(ctx, `SELECT e.workspace, e.name, count(*) AS n FROM hearth_mentions x JOIN hearth_entities e ON e.id = x.entity_id
			WHERE $1 = '' OR e.workspace = $1 GROUP BY e.id ORDER BY n DESC, e.name COLLATE "C" LIMIT $2`, ws, top)
		if err != nil {
			return st, s.fail(ctx, "graph stats", err)
		}
		var m store.Mention
		if _, err := pgx.ForEachRow(rows, []any{&m.Workspace, &m.Name, &m.Memories}, func() error {
			st.MostMentioned = append(st.MostMentioned, m)
			return nil
		}); err != nil {
			return st, s.fail(ctx, "graph stats", err)
		}
	}
	return st, nil
}
