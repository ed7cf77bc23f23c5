// Package pgstore is the memory store on a PostgreSQL server, through pgx
// and its pool: one database shared by any number of daemons (a user's
// machines, a team). It passes the same contracts as the embedded SQLite
// store (package storetest: memories and the memory graph) and ranks the
// same way: lexically through the in-memory BM25 index (packages lexindex
// and rank), vectors by brute-force cosine similarity. The graph is served
// from memory too (package graphindex, graph.go).
//
// Every daemon keeps its own index and learns of every write, its own and
// the others', from the change log (hearth_changes): each add and delete
// takes the one counter row's lock, numbers itself, and commits, so changes
// commit in the order of their numbers. A write NOTIFYs the others; each
// daemon LISTENs on a connection of its own and reads the log from the last
// change it applied, and polls it too, so a lost connection only delays it
// (docs/decisions/0019). A write is answered once it is committed (durable
// as the server's synchronous_commit makes it) and in this daemon's index.
// Graph writes have a log of their own (hearth_graph_changes) that reaches
// every daemon's in-memory graph the same way.
// Both logs are pruned of what every live daemon has applied (prune.go); a
// daemon behind the pruning point rebuilds from the tables.
//
// The index is saved as a snapshot (package rank) stamped with the store's
// id and the change it reflects; the next start maps it and catches up from
// there instead of reading every chunk.
//
// Errors wrap store.ErrUnavailable and never carry the password or the DSN.
package pgstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/memory/graphwrite"
	"github.com/hearth-mcp/hearth/pkg/memory/lexindex"
	"github.com/hearth-mcp/hearth/pkg/memory/rank"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/memory/storecore"
)

// Options configure a store.
type Options struct {
	// Build is the hearthd version, recorded in the format marker of a
	// database this store creates.
	Build string
	// Snapshot is the index snapshot's file ("" keeps none).
	Snapshot string
	// Log receives what the store does on its own (catching up, reconnecting).
	Log *zap.Logger
	// Poll is how often the change log is read without a notification
	// (default 2 s): the backstop for a notification lost with its connection.
	Poll time.Duration
	// Prune is how often the daemon reports its place in the change logs
	// and prunes them (default 1 minute); Lease is how long such a report
	// holds them back (default 10 minutes, at least twice Prune): a daemon
	// gone for longer rebuilds when it returns (prune.go).
	Prune, Lease time.Duration
}

const (
	// maxBatch bounds one group commit.
	maxBatch = 256
	// opTimeout bounds one operation on the server, so a server that stopped
	// answering (not merely down) cannot hold a call.
	opTimeout = 10 * time.Second
	// catchUpBatch is how many log entries one read takes.
	catchUpBatch = 5000
	// notifyChannel is the channel writes NOTIFY and daemons LISTEN on.
	notifyChannel = "hearth_changes"
)

// Store is the PostgreSQL memory store.
type Store struct {
	// Core is the index (it changes only through the log, in log order,
	// under Indexing), the graph, their snapshot and the writers' queues.
	storecore.Core[*graphTx]

	pool     *pgxpool.Pool
	cfg      *pgx.ConnConfig // for the listening connection
	where    string
	password string
	opts     Options
	daemon   string // this store's row in hearth_daemons

	// The graph changes only through the graph log, in log order, under
	// graphing; gApplied is the last graph change it reflects, gHigh the
	// counters after that change.
	graphing sync.Mutex
	gApplied int64
	gHigh    graphCounters

	wake    chan struct{} // the log has news: catch up
	gwake   chan struct{} // the graph log has news
	stopped sync.WaitGroup
	once    sync.Once
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at dsn (a postgres:// URL or key/value
// DSN), runs the format guard (creating the tables in a fresh database), and
// starts loading the index in the background. A refusal of the guard is a
// *store.FormatError wrapped with store.ErrUnavailable.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, where, err := parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.Poll <= 0 {
		opts.Poll = 2 * time.Second
	}
	if opts.Build == "" {
		opts.Build = "unknown"
	}
	if opts.Prune <= 0 {
		opts.Prune = defaultPrune
	}
	if opts.Lease <= 0 {
		opts.Lease = defaultLease
	}
	opts.Lease = max(opts.Lease, 2*opts.Prune)
	pcfg, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	pcfg.ConnConfig = cfg.Copy()
	pcfg.MaxConns = 8
	pcfg.MinConns = 0
	pcfg.HealthCheckPeriod = 5 * time.Second
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("%w: PostgreSQL store %s: %s", store.ErrUnavailable, where, clean(err, cfg.Password))
	}
	s := &Store{pool: pool, cfg: cfg, where: where, password: cfg.Password, opts: opts, daemon: uuid.NewString(),
		wake: make(chan struct{}, 1), gwake: make(chan struct{}, 1)}
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	id, created, err := checkFormat(octx, pool, where, opts.Build)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("%w: PostgreSQL store %s: %w", store.ErrUnavailable, where, s.cleanErr(err))
	}
	s.Init(storecore.Config[*graphTx]{ID: id, Snapshot: opts.Snapshot, Log: opts.Log, Check: refuseNUL,
		Rows: func(w *graphTx) graphwrite.Rows { return w }, Probe: s.probeGraph, Bound: bounded,
		Fresh: s.fresh, Hits: s.hits, Mentions: s.mentions, MentionedIn: s.mentionedIn})
	if created {
		s.Log.Info("memory: created the hearth tables in the PostgreSQL store", zap.String("store", where), zap.String("format", Format))
	}
	s.stopped.Add(4)
	go s.loadThenWrite()
	go s.graphWriter()
	go s.listen()
	go s.keeper()
	return s, nil
}

// cleanErr keeps a guard refusal as it is (it names no secret) and masks
// the password in anything else.
func (s *Store) cleanErr(err error) error {
	var refusal *store.FormatError
	if errors.As(err, &refusal) {
		return err
	}
	return errors.New(clean(err, s.password))
}

// Where names the server and database, without credentials.
func (s *Store) Where() string { return s.where }

// Close stops the writer and the listener, saves the index snapshot, and
// closes the pool. Adds still waiting fail.
func (s *Store) Close() error {
	s.once.Do(func() {
		close(s.Closing)
		s.stopped.Wait()
		select {
		case <-s.Ready():
			if s.LoadErr() == nil {
				s.SaveSnapshot()
			}
		default:
		}
		s.pool.Close()
	})
	return nil
}

// fail turns a database error into the store's error: the caller's own
// cancellation stays a context error, everything else is the engine
// failing. The message never carries the password.
func (s *Store) fail(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, store.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: postgres %s (%s): %s", store.ErrUnavailable, op, s.where, clean(err, s.password))
}

// bounded is ctx with at most opTimeout left.
func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, opTimeout)
}

// loadThenWrite loads the index (snapshot, else rebuild), then becomes the
// writer and the one that catches up.
func (s *Store) loadThenWrite() {
	defer s.stopped.Done()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-s.Closing:
			cancel()
		case <-s.Ready():
		}
	}()
	err := s.load(ctx)
	cancel()
	if err != nil {
		err = s.fail(ctx, "load the search index", err)
		s.Log.Error("memory: loading the search index failed", zap.Error(err))
	}
	s.Loaded(err)
	if err != nil {
		// Nothing can be served; Close still needs the loop below gone.
		<-s.Closing
		return
	}
	s.writer()
}

// load sets ix from the snapshot when it is this store's and not ahead of
// it, else from the database; then catches up with the log.
func (s *Store) load(ctx context.Context) error {
	rebuilt, err := s.LoadIndex(func() bool {
		return s.LoadSnapshot(func(seq int64) (mem int64, found bool, err error) {
			err = s.pool.QueryRow(ctx, `SELECT memory_id FROM hearth_changes WHERE seq = $1`, seq).Scan(&mem)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				return 0, false, nil
			case err != nil:
				return 0, false, errors.New(clean(err, s.password))
			}
			return mem, true, nil
		})
	}, func() error { return s.rebuild(ctx) }, func() error { return s.catchUp(ctx, nil) })
	if err != nil {
		return err
	}
	start := time.Now()
	if err := s.loadGraph(ctx); err != nil {
		return err
	}
	if err := s.reportPlace(ctx); err != nil {
		return err
	}
	c := s.GraphIndex().Counts("")
	s.Log.Info("memory: graph loaded", zap.Int64("entities", c.Entities), zap.Int64("relations", c.Relations),
		zap.Int64("change", s.gApplied), zap.Duration("took", time.Since(start)))
	if rebuilt {
		// Saved in the background: the index serves meanwhile.
		s.stopped.Add(1)
		go func() { defer s.stopped.Done(); s.SaveSnapshot() }()
	}
	return nil
}

// rebuild reads every chunk, with the log's last change, in one snapshot of
// the database.
func (s *Store) rebuild(ctx context.Context) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	var seq, mem int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM hearth_changes`).Scan(&seq); err != nil {
		return err
	}
	if seq > 0 {
		if err := tx.QueryRow(ctx, `SELECT memory_id FROM hearth_changes WHERE seq = $1`, seq).Scan(&mem); err != nil {
			return err
		}
	}
	ix, err := rank.Load(func(f *rank.Feed) error {
		rows, err := tx.Query(ctx, `SELECT m.id, m.workspace, m.source, m.tags, m.ts, c.id, c.text
			FROM hearth_chunks c JOIN hearth_memories m ON m.id = c.memory_id ORDER BY c.id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var m lexindex.Memory
			var c lexindex.Chunk
			if err := rows.Scan(&m.Key, &m.Workspace, &m.Source, &m.Tags, &m.Time, &c.Key, &c.Text); err != nil {
				return err
			}
			if !f.Chunk(m.Key, c) {
				f.Memory(m, c)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	s.SetIndex(ix)
	s.Applied, s.AppliedMem = seq, mem
	return nil
}

// catchUp applies every logged change after the last applied one. mine
// holds memories this daemon just wrote, so they need not be read back.
func (s *Store) catchUp(ctx context.Context, mine map[int64]rank.Stored) error {
	s.Indexing.Lock()
	defer s.Indexing.Unlock()
	for {
		changes, err := s.logAfter(ctx)
		if errors.Is(err, errPruned) {
			// Down or silent past the lease: what this index lacks is in
			// the tables only. Rebuilt, as at a first start.
			s.Log.Warn("memory: the change log was pruned past this daemon's index; rebuilding it from the tables", zap.Int64("applied", s.Applied))
			if err := s.rebuild(ctx); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if len(changes) == 0 {
			return nil
		}
		n, err := rank.Apply(s.Index(), changes, func(keys []int64) ([]rank.Stored, error) { return s.readStored(ctx, keys, mine) })
		if n > 0 {
			s.Applied, s.AppliedMem = changes[n-1].Seq, changes[n-1].Memory
		}
		if err != nil {
			return err
		}
		if len(changes) < catchUpBatch {
			return nil
		}
	}
}

// logAfter reads the log after the last change applied, at most
// catchUpBatch entries, or errPruned when the next one was pruned. One
// statement, so the pruning point and the entries are of one moment. (No
// entry after the last one applied means none was pruned: the log always
// keeps its last change.)
func (s *Store) logAfter(ctx context.Context) ([]rank.Change, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, memory_id, deleted, (SELECT changes FROM hearth_pruned WHERE id = 1)
		FROM hearth_changes WHERE seq > $1 ORDER BY seq LIMIT $2`, s.Applied, catchUpBatch)
	if err != nil {
		return nil, err
	}
	var changes []rank.Change
	var c rank.Change
	var pruned int64
	if _, err := pgx.ForEachRow(rows, []any{&c.Seq, &c.Memory, &c.Deleted, &pruned}, func() error {
		changes = append(changes, c)
		return nil
	}); err != nil {
		return nil, err
	}
	if pruned > s.Applied {
		return nil, errPruned
	}
	return changes, nil
}

// readStored reads memories by key for the index, ascending, taking mine's
// first.
func (s *Store) readStored(ctx context.Context, keys []int64, mine map[int64]rank.Stored) ([]rank.Stored, error) {
	var out []rank.Stored
	var need []int64
	for _, k := range keys {
		if _, ok := mine[k]; !ok {
			need = append(need, k)
		}
	}
	byKey := map[int64]int{}
	if len(need) > 0 {
		rows, err := s.pool.Query(ctx, `SELECT m.id, m.workspace, m.source, m.tags, m.ts, c.id, c.text
			FROM hearth_chunks c JOIN hearth_memories m ON m.id = c.memory_id WHERE m.id = ANY($1) ORDER BY c.id`, need)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var m lexindex.Memory
			var c lexindex.Chunk
			if err := rows.Scan(&m.Key, &m.Workspace, &m.Source, &m.Tags, &m.Time, &c.Key, &c.Text); err != nil {
				return nil, err
			}
			if i, ok := byKey[m.Key]; ok {
				out[i].Chunks = append(out[i].Chunks, c)
				continue
			}
			byKey[m.Key] = len(out)
			out = append(out, rank.Stored{Memory: m, Chunks: []lexindex.Chunk{c}})
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	for _, k := range keys {
		if m, ok := mine[k]; ok {
			if _, dup := byKey[k]; !dup {
				byKey[k] = len(out)
				out = append(out, m)
			}
		}
	}
	slices.SortFunc(out, func(a, b rank.Stored) int { return cmpInt(a.Memory.Key, b.Memory.Key) })
	return out, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// refuseNUL refuses a memory PostgreSQL's text cannot keep (U+0000): alone,
// before it is queued, because in a group commit it would fail every add
// beside it.
func refuseNUL(m store.NewMemory) error {
	if field := nulField(m); field != "" {
		return fmt.Errorf("add memory: the %s holds a NUL character (U+0000), which PostgreSQL cannot keep", field)
	}
	return nil
}

// nulField names the first part of m that holds U+0000, or "".
func nulField(m store.NewMemory) string {
	has := func(s string) bool { return strings.IndexByte(s, 0) >= 0 }
	switch {
	case has(m.Text):
		return "text"
	case has(m.Workspace):
		return "workspace"
	case has(m.Metadata.Source) || has(m.Model):
		return "source"
	}
	for _, t := range m.Metadata.Tags {
		if has(t) {
			return "tags"
		}
	}
	for _, c := range m.Chunks {
		if has(c) {
			return "chunks"
		}
	}
	return ""
}

// writer group-commits adds and catches up when the log has news.
func (s *Store) writer() {
	s.Serve(storecore.Loop[*graphTx]{Adds: true, Max: maxBatch, Wake: s.wake, Poll: s.opts.Poll, CatchUp: s.catchUpLogged, Snapshots: true,
		Commit: func(adds []*storecore.AddRequest, _ []*storecore.Op[*graphTx]) { s.commit(adds) }})
}

func (s *Store) catchUpLogged() {
	ctx, cancel := bounded(context.Background())
	defer cancel()
	if err := s.catchUp(ctx, nil); err != nil {
		s.Log.Warn("memory: catching up with the change log failed; will retry", zap.Error(s.fail(ctx, "catch up", err)))
	}
}

func (s *Store) commit(batch []*storecore.AddRequest) {
	// Not bound to any one caller's context: one client cancelling must not
	// roll back another's add.
	ctx, cancel := bounded(context.Background())
	defer cancel()
	live := storecore.Live(batch)
	if len(live) == 0 {
		return
	}
	ids, mine, err := s.insert(ctx, live)
	if err == nil {
		// Indexed before anyone is answered: an answered add is searchable.
		// Should the log not be readable right after the commit, the adds
		// are still answered (they are durable; answering an error would
		// invite a duplicate), and the next catch-up indexes them.
		if cerr := s.catchUp(ctx, mine); cerr != nil {
			s.Log.Warn("memory: indexing committed adds failed; will catch up", zap.Error(s.fail(ctx, "catch up", cerr)))
		}
	}
	for i, req := range live {
		if err != nil {
			req.Done <- storecore.AddResult{Err: s.fail(ctx, "add", err)}
		} else {
			req.Done <- storecore.AddResult{ID: ids[i]}
		}
	}
}

// insert writes a group commit's memories in one transaction.
func (s *Store) insert(ctx context.Context, live []*storecore.AddRequest) ([]string, map[int64]rank.Stored, error) {
	nchunks := 0
	for _, req := range live {
		nchunks += len(req.M.Chunks)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback(context.Background())
	var lastMem, lastChunk, lastChange int64
	if err := tx.QueryRow(ctx, `UPDATE hearth_counters SET memory = memory + $1, chunk = chunk + $2, change = change + $1
		WHERE id = 1 RETURNING memory, chunk, change`, len(live), nchunks).Scan(&lastMem, &lastChunk, &lastChange); err != nil {
		return nil, nil, err
	}
	mem, chunkID, change := lastMem-int64(len(live)), lastChunk-int64(nchunks), lastChange-int64(len(live))
	now := time.Now()
	ids := make([]string, len(live))
	mine := make(map[int64]rank.Stored, len(live))
	var memRows, chunkRows, changeRows [][]any
	for i, req := range live {
		m := req.M
		id, err := uuid.NewV7()
		if err != nil {
			return nil, nil, err
		}
		if m.Metadata.Time.IsZero() {
			m.Metadata.Time = now
		}
		tags := m.Metadata.Tags
		if tags == nil {
			tags = []string{}
		}
		mem++
		change++
		ids[i] = id.String()
		memRows = append(memRows, []any{mem, ids[i], m.Workspace, m.Text, m.Metadata.Source, tags, m.Metadata.Time.UnixMilli(), now.UnixMilli(), len(m.Chunks)})
		changeRows = append(changeRows, []any{change, mem, false})
		st := rank.Stored{Memory: rank.Memory(mem, m)}
		for j, text := range m.Chunks {
			var vec []byte
			var model *string
			if m.Vectors != nil {
				vec, model = storecore.VectorBytes(m.Vectors[j]), &m.Model
			}
			chunkID++
			chunkRows = append(chunkRows, []any{chunkID, mem, j, text, vec, model})
			st.Chunks = append(st.Chunks, lexindex.Chunk{Key: chunkID, Text: text})
		}
		mine[mem] = st
	}
	for _, c := range []struct {
		table string
		cols  []string
		rows  [][]any
	}{
		{"hearth_memories", []string{"id", "uid", "workspace", "text", "source", "tags", "ts", "added", "chunks"}, memRows},
		{"hearth_chunks", []string{"id", "memory_id", "seq", "text", "embedding", "model"}, chunkRows},
		{"hearth_changes", []string{"seq", "memory_id", "deleted"}, changeRows},
	} {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{c.table}, c.cols, pgx.CopyFromRows(c.rows)); err != nil {
			return nil, nil, err
		}
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, fmt.Sprint(lastChange)); err != nil {
		return nil, nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, nil, err
	}
	return ids, mine, nil
}

// listen holds a connection LISTENing for other daemons' writes and wakes
// the writer (or the graph writer, for a graph write) to catch up; after losing it, it reconnects with backoff and
// wakes the writer once more, for what it missed meanwhile.
func (s *Store) listen() {
	defer s.stopped.Done()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-s.Closing; cancel() }()
	select {
	case <-s.Ready():
	case <-ctx.Done():
		return
	}
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, func() { backoff = 100 * time.Millisecond })
		if ctx.Err() != nil {
			return
		}
		s.Log.Warn("memory: lost the PostgreSQL notification connection; reconnecting", zap.String("store", s.where),
			zap.String("error", clean(err, s.password)), zap.Duration("retry", backoff))
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (s *Store) listenOnce(ctx context.Context, connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	connected()
	// Whatever was written while this connection was down.
	s.nudge(s.wake)
	s.nudge(s.gwake)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if strings.HasPrefix(n.Payload, "g") { // a graph write (graph.go)
			s.nudge(s.gwake)
		} else {
			s.nudge(s.wake)
		}
	}
}

// nudge asks a writer to catch up; one request pending is enough.
func (s *Store) nudge(wake chan struct{}) {
	select {
	case wake <- struct{}{}:
	default:
	}
}

const memoryColumns = `m.uid, m.workspace, m.text, m.source, m.tags, m.ts, m.chunks`

func scanMemory(row pgx.Row, extra ...any) (store.Memory, error) {
	var m store.Memory
	var ts int64
	dest := append([]any{&m.ID, &m.Workspace, &m.Text, &m.Metadata.Source, &m.Metadata.Tags, &ts, &m.Chunks}, extra...)
	if err := row.Scan(dest...); err != nil {
		return m, err
	}
	if len(m.Metadata.Tags) == 0 {
		m.Metadata.Tags = nil
	}
	m.Metadata.Time = time.UnixMilli(ts).UTC()
	return m, nil
}

// Get returns one memory.
func (s *Store) Get(ctx context.Context, id string) (store.Memory, error) {
	if s.IsClosed() {
		return store.Memory{}, storecore.ErrClosed
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	m, err := scanMemory(s.pool.QueryRow(ctx, `SELECT `+memoryColumns+` FROM hearth_memories m WHERE m.uid = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return m, store.ErrNotFound
	}
	if err != nil {
		return m, s.fail(ctx, "get", err)
	}
	return m, nil
}

// Delete removes a memory and its chunks, logs it, and waits until the index
// has it.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := s.Indexed(ctx); err != nil {
		return err
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	err := func() error {
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(context.Background())
		var change, key int64
		if err := tx.QueryRow(ctx, `UPDATE hearth_counters SET change = change + 1 WHERE id = 1 RETURNING change`).Scan(&change); err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `DELETE FROM hearth_memories WHERE uid = $1 RETURNING id`, id).Scan(&key)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO hearth_changes (seq, memory_id, deleted) VALUES ($1, $2, true)`, change, key); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, fmt.Sprint(change)); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}()
	if errors.Is(err, store.ErrNotFound) {
		return err
	}
	if err != nil {
		return s.fail(ctx, "delete", err)
	}
	if err := s.catchUp(ctx, nil); err != nil {
		s.Log.Warn("memory: indexing a committed delete failed; will catch up", zap.Error(s.fail(ctx, "catch up", err)))
	}
	return nil
}

// filterSQL appends the WHERE conditions shared by the rankings.
func filterSQL(q store.Query, where *strings.Builder, args *[]any) {
	arg := func(v any) string { *args = append(*args, v); return fmt.Sprintf("$%d", len(*args)) }
	where.WriteString(` AND m.workspace = ` + arg(q.Workspace))
	f := q.Filters
	if f.Source != "" {
		where.WriteString(` AND m.source = ` + arg(f.Source))
	}
	if !f.From.IsZero() {
		where.WriteString(` AND m.ts >= ` + arg(f.From.UnixMilli()))
	}
	if !f.To.IsZero() {
		where.WriteString(` AND m.ts <= ` + arg(f.To.UnixMilli()))
	}
	if tags := rank.Tags(f); len(tags) > 0 {
		where.WriteString(` AND m.tags @> ` + arg(tags) + `::text[]`)
	}
}

// probeSearches: every search first asks the log for its last change (one
// index lookup on the server) and catches up when the index is behind. A
// search then sees every write committed before it started, on any daemon,
// and a server that is down answers ErrUnavailable even when the index
// alone could answer. docs/decisions/0019 has what it costs.
var probeSearches = true

// fresh catches the index up if the log has changes it lacks.
func (s *Store) fresh(ctx context.Context) error {
	if !probeSearches {
		return nil
	}
	var last int64
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM hearth_changes`).Scan(&last); err != nil {
		return s.fail(ctx, "lexical search", err)
	}
	s.Indexing.Lock()
	behind := last > s.Applied
	s.Indexing.Unlock()
	if !behind {
		return nil
	}
	if err := s.catchUp(ctx, nil); err != nil {
		return s.fail(ctx, "lexical search", err)
	}
	return nil
}

// hits reads the memories and chunk texts of the ranked chunks, by chunk key.
func (s *Store) hits(ctx context.Context, chunks []int64) (map[int64]store.Hit, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+memoryColumns+`, c.text, c.id FROM hearth_chunks c
		JOIN hearth_memories m ON m.id = c.memory_id WHERE c.id = ANY($1)`, chunks)
	if err != nil {
		return nil, s.fail(ctx, "lexical search", err)
	}
	defer rows.Close()
	out, err := storecore.HitsByChunk(rows, len(chunks), func(r pgx.Rows, extra ...any) (store.Memory, error) { return scanMemory(r, extra...) })
	if err != nil {
		return nil, s.fail(ctx, "lexical search", err)
	}
	return out, nil
}

// SearchVector ranks by cosine similarity, computed here over the vectors of
// the chunks that pass the filters (brute force, as on SQLite).
func (s *Store) SearchVector(ctx context.Context, q store.Query, vec []float32, model string) ([]store.Hit, error) {
	if len(vec) == 0 || q.Limit <= 0 {
		return nil, nil
	}
	if s.IsClosed() {
		return nil, storecore.ErrClosed
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	args := []any{model, 4 * len(vec)}
	var where strings.Builder
	filterSQL(q, &where, &args)
	rows, err := s.pool.Query(ctx, `SELECT c.memory_id, c.id, c.embedding FROM hearth_chunks c
		JOIN hearth_memories m ON m.id = c.memory_id
		WHERE c.model = $1 AND length(c.embedding) = $2`+where.String(), args...)
	if err != nil {
		return nil, s.fail(ctx, "vector search", err)
	}
	type best struct {
		chunk int64
		sim   float64
	}
	bests := map[int64]best{}
	var raw []byte
	var mid, cid int64
	_, err = pgx.ForEachRow(rows, []any{&mid, &cid, &raw}, func() error {
		sim := cosine(vec, raw)
		if b, ok := bests[mid]; !ok || sim > b.sim || (sim == b.sim && cid < b.chunk) {
			bests[mid] = best{cid, sim}
		}
		return nil
	})
	if err != nil {
		return nil, s.fail(ctx, "vector search", err)
	}
	type ranked struct {
		mem int64
		best
	}
	rs := make([]ranked, 0, len(bests))
	for m, b := range bests {
		rs = append(rs, ranked{m, b})
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		switch {
		case a.sim > b.sim:
			return -1
		case a.sim < b.sim:
			return 1
		}
		return cmpInt(a.mem, b.mem)
	})
	if len(rs) > q.Limit {
		rs = rs[:q.Limit]
	}
	hits := make([]store.Hit, 0, len(rs))
	for _, r := range rs {
		var chunk string
		m, err := scanMemory(s.pool.QueryRow(ctx, `SELECT `+memoryColumns+`, c.text FROM hearth_memories m
			JOIN hearth_chunks c ON c.id = $1 WHERE m.id = $2`, r.chunk, r.mem), &chunk)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, s.fail(ctx, "vector search", err)
		}
		hits = append(hits, store.Hit{Memory: m, Score: r.sim, Chunk: chunk})
	}
	return hits, nil
}

// cosine is the cosine similarity of a and the little-endian float32s in b
// (of the same length); 0 when either is all zeros.
func cosine(a []float32, b []byte) float64 {
	var dot, na, nb float64
	for i, x := range a {
		y := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		dot += float64(x) * y
		na += float64(x) * float64(x)
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}

// Pending lists chunks without a vector, oldest first.
func (s *Store) Pending(ctx context.Context, limit int) ([]store.PendingChunk, error) {
	if s.IsClosed() {
		return nil, storecore.ErrClosed
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT id, text FROM hearth_chunks WHERE embedding IS NULL ORDER BY id LIMIT $1`, limit)
	if err != nil {
		return nil, s.fail(ctx, "pending", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.PendingChunk, error) {
		var p store.PendingChunk
		err := r.Scan(&p.ID, &p.Text)
		return p, err
	})
	if err != nil {
		return nil, s.fail(ctx, "pending", err)
	}
	return out, nil
}

// SetVectors stores vectors for pending chunks in one transaction.
func (s *Store) SetVectors(ctx context.Context, model string, vecs []store.ChunkVector) error {
	if s.IsClosed() {
		return storecore.ErrClosed
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, v := range vecs {
			b.Queue(`UPDATE hearth_chunks SET embedding = $1, model = $2 WHERE id = $3`, storecore.VectorBytes(v.Vector), model, v.ChunkID)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return s.fail(ctx, "set vectors", err)
	}
	return nil
}

// ForgetVectorsNotFrom marks chunks embedded by another model as pending.
func (s *Store) ForgetVectorsNotFrom(ctx context.Context, model string) (int64, error) {
	if s.IsClosed() {
		return 0, storecore.ErrClosed
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, `UPDATE hearth_chunks SET embedding = NULL, model = NULL
		WHERE embedding IS NOT NULL AND model IS DISTINCT FROM $1`, model)
	if err != nil {
		return 0, s.fail(ctx, "forget vectors", err)
	}
	return tag.RowsAffected(), nil
}

// Stats summarizes the store; SizeBytes is what its tables and indexes take.
func (s *Store) Stats(ctx context.Context) (store.Stats, error) {
	var st store.Stats
	if s.IsClosed() {
		return st, storecore.ErrClosed
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	var oldest, newest *int64
	err := s.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM hearth_memories),
		(SELECT count(*) FROM hearth_chunks),
		(SELECT count(DISTINCT workspace) FROM hearth_memories),
		(SELECT count(*) FROM hearth_chunks WHERE embedding IS NULL),
		(SELECT min(ts) FROM hearth_memories),
		(SELECT max(ts) FROM hearth_memories),
		(SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
			WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.relname LIKE 'hearth\_%')`).
		Scan(&st.Memories, &st.Chunks, &st.Workspaces, &st.Pending, &oldest, &newest, &st.SizeBytes)
	if err != nil {
		return st, s.fail(ctx, "stats", err)
	}
	if oldest != nil {
		st.Oldest = time.UnixMilli(*oldest).UTC()
		st.Newest = time.UnixMilli(*newest).UTC()
	}
	return st, nil
}
