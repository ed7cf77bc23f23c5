// Package sqlitestore is the embedded memory store: one SQLite file in WAL mode
// through modernc.org/sqlite (pure Go, no cgo), the in-memory BM25 index
// (packages lexindex and rank) for lexical ranking, rebuilt from the file at
// open, and sqlite-vec's vec_distance_cosine for vectors.
//
// Durability: every add is a committed transaction with synchronous=FULL, so an
// answered add survives SIGKILL and also power loss. (In WAL mode NORMAL would
// already survive a killed process, since the WAL is written before commit
// returns; FULL adds the fsync that survives the machine going down.)
//
// Throughput: one fsync per commit bounds a lone writer to the disk's fsync
// rate. Concurrent adds are group-committed: one goroutine owns the write
// connection and commits every add waiting at that moment in one transaction,
// answering each only after the commit. Many clients thus share fsyncs; no add
// is ever answered before it is on disk.
//
// Vectors are BLOBs in the chunks table, ranked by brute-force
// vec_distance_cosine over the chunks that pass the filters in the same SQL
// query. A vec0 KNN index would be faster on large stores but cannot apply our
// filters (tags, dates) before its top-k.
package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	_ "modernc.org/sqlite"     // database/sql driver "sqlite"
	_ "modernc.org/sqlite/vec" // sqlite-vec functions on every connection

	"github.com/hearth-mcp/hearth/pkg/memory/graphindex"
	"github.com/hearth-mcp/hearth/pkg/memory/graphwrite"
	"github.com/hearth-mcp/hearth/pkg/memory/rank"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/memory/storecore"
	"github.com/hearth-mcp/hearth/pkg/safefile"
)

// maxBatch bounds one group commit, so a burst cannot hold the write lock long.
const maxBatch = 256

// Store is the SQLite memory store.
type Store struct {
	// Core is the index (every change to the database's memories reaches
	// it under Indexing, in the order the database made them, so a row id
	// the database reuses after a delete cannot be confused with the
	// deleted one), the graph, their snapshot and the writer's queues.
	storecore.Core[*sql.Tx]

	path string
	w    *sql.DB // exactly one connection: SQLite has one writer anyway
	r    *sql.DB // readers; WAL lets them run beside the writer

	stopped  chan struct{}
	closeErr error
	once     sync.Once
	saving   sync.WaitGroup // a snapshot saved in the background
}

var _ store.Store = (*Store)(nil)

func dsn(path string, extra ...string) string {
	p := []string{
		"_pragma=busy_timeout(10000)",
		"_pragma=foreign_keys(1)",
		"_pragma=synchronous(FULL)",
		"_pragma=cache_size(-32768)", // 32 MiB per connection
	}
	return path + "?" + strings.Join(append(p, extra...), "&")
}

// private makes the database file, and its -wal and -shm beside it, 0600
// before SQLite opens it: SQLite creates a new database with 0644 less the
// umask, and its -wal and -shm with the database's own mode, so creating
// the database 0600 first keeps all three private; files an older build
// left wider are narrowed.
//
// The three are files of hearth's own in the data directory, which SQLite
// then opens by name: each must be one by safefile's rule (no link, no
// FIFO, this user's and writable by no one else) before SQLite sees it.
func private(path string) error {
	files := []string{path, path + "-wal", path + "-shm"}
	for _, p := range files {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, 0o600); err != nil {
				return fmt.Errorf("narrow %s to 0600: %w", p, err)
			}
		}
	}
	f, err := safefile.AppendOwn(path)
	if err != nil {
		return err
	}
	f.Close()
	for _, p := range files[1:] {
		if f, err := safefile.OpenOwn(p); err == nil {
			f.Close()
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Options configure a store.
type Options struct {
	// Snapshot is the index snapshot's file: "" keeps none; Open puts it
	// beside the database (memory.db: memory.index).
	Snapshot string
	// Log receives what the store does on its own (loading, snapshots).
	Log *zap.Logger
}

// Open opens (creating if needed) the store at path and brings its schema up to
// date. Every error wraps store.ErrUnavailable: a file that is not a database,
// is corrupt or cannot be created makes the store unavailable, not the daemon.
// Its index snapshot is beside it (SnapshotPath).
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, Options{Snapshot: SnapshotPath(path)})
}

// SnapshotPath is where Open keeps the index snapshot of the database at
// path: the same name with the extension .index.
func SnapshotPath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".index"
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	s, err := open(ctx, path, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: open sqlite store %s: %w", store.ErrUnavailable, path, err)
	}
	return s, nil
}

func open(ctx context.Context, path string, opts Options) (*Store, error) {
	if err := private(path); err != nil {
		return nil, err
	}
	w, err := sql.Open("sqlite", dsn(path, "_pragma=journal_mode(WAL)", "_txlock=immediate"))
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	var mode string
	if err := w.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		w.Close()
		return nil, err
	}
	if mode != "wal" {
		w.Close()
		return nil, fmt.Errorf("journal_mode is %q, want wal", mode)
	}
	if err := migrate(ctx, w); err != nil {
		w.Close()
		return nil, err
	}
	// Touch every table once so a file whose header is fine but whose schema
	// pages are damaged fails here rather than on the first call.
	var n int64
	if err := w.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM sqlite_master) + (SELECT count(*) FROM (SELECT 1 FROM memories LIMIT 1)) + (SELECT count(*) FROM (SELECT 1 FROM chunks LIMIT 1))`).Scan(&n); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", dsn(path, "_pragma=query_only(1)"))
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	var id string
	if err := w.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'store_id'`).Scan(&id); err != nil {
		w.Close()
		r.Close()
		return nil, err
	}
	s := &Store{path: path, w: w, r: r, stopped: make(chan struct{})}
	s.Init(storecore.Config[*sql.Tx]{ID: id, Snapshot: opts.Snapshot, Log: opts.Log, Analyze: true, Rows: func(tx *sql.Tx) graphwrite.Rows { return txRows{tx} },
		Hits: s.hits, Mentions: s.mentions, MentionedIn: s.mentionedIn})
	go s.loadThenWrite()
	return s, nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close stops the writer, saves the index snapshot, then closes both
// pools. Adds still waiting fail.
func (s *Store) Close() error {
	s.once.Do(func() {
		close(s.Closing)
		<-s.stopped
		s.saving.Wait()
		if s.LoadErr() == nil && s.Index() != nil {
			s.SaveSnapshot()
		}
		s.closeErr = errors.Join(s.r.Close(), s.w.Close())
	})
	return s.closeErr
}

// fail turns a database error into the store's error: the caller's own
// cancellation stays a context error, everything else is the engine failing.
// Our SQL is fixed and user values are bound parameters, so an error here is
// never the request's fault.
func fail(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%w: sqlite %s: %w", store.ErrUnavailable, op, err)
}

// loadThenWrite builds the index from the file, then becomes the writer.
// Adds wait meanwhile: each must reach the index after everything before it.
func (s *Store) loadThenWrite() {
	defer close(s.stopped)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-s.Closing: // Close does not wait for a long load to finish
			cancel()
		case <-s.Ready():
		}
	}()
	err := s.load(ctx)
	if err == nil {
		var g *graphindex.Index
		if g, err = loadGraph(ctx, s.w); err == nil {
			s.SetGraphIndex(g)
		}
	}
	cancel()
	if err != nil {
		err = fmt.Errorf("%w: load the search index: %w", store.ErrUnavailable, err)
	}
	s.Loaded(err)
	s.writer()
}

// writer owns the write connection and group-commits adds and graph writes:
// everything waiting when a commit starts shares it.
func (s *Store) writer() {
	s.Serve(storecore.Loop[*sql.Tx]{Adds: true, Ops: true, Max: maxBatch, Snapshots: true, Commit: s.commit})
}

func (s *Store) commit(batch []*storecore.AddRequest, ops []*storecore.Op[*sql.Tx]) {
	// The batch's transaction is not bound to any one caller's context: one
	// client cancelling must not roll back another's add.
	ctx := context.Background()
	live, liveOps := storecore.Live(batch), storecore.LiveOps(ops)
	if len(live)+len(liveOps) == 0 {
		return
	}
	if err := s.LoadErr(); err != nil {
		for _, req := range live {
			req.Done <- storecore.AddResult{Err: err}
		}
		for _, op := range liveOps {
			op.Done <- err
		}
		return
	}
	var ids []string
	var keys []rowKeys
	var lastSeq int64
	s.Indexing.Lock()
	defer s.Indexing.Unlock()
	opErrs := make([]error, len(liveOps))
	changes := make([][]*graphindex.Change, len(liveOps))
	err := func() error {
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if len(live) > 0 {
			ms := make([]*store.NewMemory, len(live))
			for i, req := range live {
				ms[i] = &req.M
			}
			if ids, keys, lastSeq, err = insertBatch(ctx, tx, ms); err != nil {
				return err
			}
		}
		for i, op := range liveOps {
			if changes[i], opErrs[i], err = runOp(ctx, tx, op); err != nil {
				return err
			}
		}
		return tx.Commit()
	}()
	if err == nil {
		// Indexed before anyone is answered: an answered add is searchable,
		// an answered graph write is read back.
		for i, req := range live {
			s.Index().AddAnalyzed(rank.Memory(keys[i].memory, req.M), keys[i].chunks, req.Docs)
		}
		if len(keys) > 0 {
			s.Applied, s.AppliedMem = lastSeq, keys[len(keys)-1].memory
		}
		for i := range liveOps {
			for _, c := range changes[i] {
				s.GraphIndex().Apply(c)
			}
		}
	}
	for i, req := range live {
		if err != nil {
			req.Done <- storecore.AddResult{Err: fail(ctx, "add", err)}
		} else {
			req.Done <- storecore.AddResult{ID: ids[i]}
		}
	}
	for i, op := range liveOps {
		switch {
		case err != nil:
			op.Done <- fail(ctx, "graph write", err)
		default:
			op.Done <- opErrs[i]
		}
	}
}

// rowKeys are the row ids of one added memory and of its chunks.
type rowKeys struct {
	memory int64
	chunks []int64
}

// insertBatch inserts a group commit's memories, tags, chunks and change
// log rows with one multi-row INSERT per table (per maxParams parameters),
// so the cost of a statement is shared by the batch. Rows get explicit ids
// after the largest in use; a memory id is also past every id the change
// log names, so no id is reused after a delete. It returns each memory's id
// and row ids and the last change's number; a zero Metadata.Time is set to
// now, as stored.
func insertBatch(ctx context.Context, tx *sql.Tx, ms []*store.NewMemory) ([]string, []rowKeys, int64, error) {
	var lastMem, lastChunk, lastSeq int64
	if err := tx.QueryRowContext(ctx, `SELECT max(coalesce((SELECT max(id) FROM memories), 0), coalesce((SELECT max(memory_id) FROM changes), 0)),
		coalesce((SELECT max(id) FROM chunks), 0), coalesce((SELECT max(seq) FROM changes), 0)`).
		Scan(&lastMem, &lastChunk, &lastSeq); err != nil {
		return nil, nil, 0, err
	}
	now := time.Now()
	ids := make([]string, len(ms))
	keys := make([]rowKeys, len(ms))
	var memRows, tagRows, chunkRows, changeRows [][]any
	for i, m := range ms {
		id, err := uuid.NewV7() // time-ordered: new rows land at the end of the uid index
		if err != nil {
			return nil, nil, 0, err
		}
		tags := m.Metadata.Tags
		if tags == nil {
			tags = []string{}
		}
		tagsJSON, err := json.Marshal(tags)
		if err != nil {
			return nil, nil, 0, err
		}
		if m.Metadata.Time.IsZero() {
			m.Metadata.Time = now
		}
		lastMem++
		lastSeq++
		ids[i], keys[i].memory = id.String(), lastMem
		changeRows = append(changeRows, []any{lastSeq, lastMem, 0})
		memRows = append(memRows, []any{lastMem, id.String(), m.Workspace, m.Text, m.Metadata.Source, string(tagsJSON),
			m.Metadata.Time.UnixMilli(), now.UnixMilli(), len(m.Chunks)})
		for _, tag := range tags {
			tagRows = append(tagRows, []any{tag, lastMem})
		}
		for j, text := range m.Chunks {
			var vec, model any
			if m.Vectors != nil {
				vec, model = storecore.VectorBytes(m.Vectors[j]), m.Model
			}
			lastChunk++
			keys[i].chunks = append(keys[i].chunks, lastChunk)
			chunkRows = append(chunkRows, []any{lastChunk, lastMem, j, text, vec, model})
		}
	}
	for _, ins := range []struct {
		head string
		rows [][]any
	}{
		{`INSERT INTO memories(id, uid, workspace, text, source, tags, ts, added, chunks) VALUES `, memRows},
		{`INSERT OR IGNORE INTO memory_tags(tag, memory_id) VALUES `, tagRows},
		{`INSERT INTO chunks(id, memory_id, seq, text, embedding, model) VALUES `, chunkRows},
		{`INSERT INTO changes(seq, memory_id, deleted) VALUES `, changeRows},
	} {
		if err := insertRows(ctx, tx, ins.head, ins.rows); err != nil {
			return nil, nil, 0, err
		}
	}
	return ids, keys, lastSeq, nil
}

// maxParams keeps a statement under SQLite's limit of 32 766 bound parameters.
const maxParams = 30_000

// insertRows runs head followed by one "(?, ...)" group per row, for as many
// rows at a time as maxParams allows. All rows have the same width.
func insertRows(ctx context.Context, tx *sql.Tx, head string, rows [][]any) error {
	return insertReturning(ctx, tx, head, "", rows, nil)
}

// insertReturning is insertRows for a statement with a RETURNING clause
// (tail), calling scan for every row returned; without scan the statement
// is only executed.
func insertReturning(ctx context.Context, tx *sql.Tx, head, tail string, rows [][]any, scan func(*sql.Rows) error) error {
	if len(rows) == 0 {
		return nil
	}
	width := len(rows[0])
	group := "(?" + strings.Repeat(", ?", width-1) + ")"
	for per := maxParams / width; len(rows) > 0; {
		n := min(per, len(rows))
		var q strings.Builder
		q.WriteString(head)
		args := make([]any, 0, n*width)
		for i, r := range rows[:n] {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString(group)
			args = append(args, r...)
		}
		q.WriteString(tail)
		rows = rows[n:]
		if scan == nil {
			if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
				return err
			}
			continue
		}
		res, err := tx.QueryContext(ctx, q.String(), args...)
		if err != nil {
			return err
		}
		for res.Next() {
			if err := scan(res); err != nil {
				res.Close()
				return err
			}
		}
		if err := res.Close(); err != nil {
			return err
		}
		if err := res.Err(); err != nil {
			return err
		}
	}
	return nil
}

const memoryColumns = `m.uid, m.workspace, m.text, m.source, m.tags, m.ts, m.chunks`

type scanner interface{ Scan(...any) error }

func scanMemory(row scanner, extra ...any) (store.Memory, error) {
	var m store.Memory
	var tags string
	var ts int64
	dest := append([]any{&m.ID, &m.Workspace, &m.Text, &m.Metadata.Source, &tags, &ts, &m.Chunks}, extra...)
	if err := row.Scan(dest...); err != nil {
		return m, err
	}
	if err := json.Unmarshal([]byte(tags), &m.Metadata.Tags); err != nil {
		return m, fmt.Errorf("tags of memory %s: %w", m.ID, err)
	}
	m.Metadata.Time = time.UnixMilli(ts).UTC()
	return m, nil
}

// Get returns one memory.
func (s *Store) Get(ctx context.Context, id string) (store.Memory, error) {
	if s.IsClosed() {
		return store.Memory{}, storecore.ErrClosed
	}
	m, err := scanMemory(s.r.QueryRowContext(ctx, `SELECT `+memoryColumns+` FROM memories m WHERE m.uid = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return m, store.ErrNotFound
	}
	if err != nil {
		return m, fail(ctx, "get", err)
	}
	return m, nil
}

// Delete removes a memory; its chunks, tags and index entries go with it.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := s.Indexed(ctx); err != nil {
		return err
	}
	s.Indexing.Lock()
	defer s.Indexing.Unlock()
	var key, seq int64
	err := func() error {
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := tx.QueryRowContext(ctx, `DELETE FROM memories WHERE uid = ? RETURNING id`, id).Scan(&key); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `INSERT INTO changes(seq, memory_id, deleted)
			VALUES (coalesce((SELECT max(seq) FROM changes), 0) + 1, ?, 1) RETURNING seq`, key).Scan(&seq); err != nil {
			return err
		}
		return tx.Commit()
	}()
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return fail(ctx, "delete", err)
	}
	s.Index().Delete(key)
	s.Applied, s.AppliedMem = seq, key
	return nil
}

// filterSQL appends the WHERE conditions shared by both rankings; m is the
// memories table. Filters are part of the ranking query, so a limit of 10
// means the 10 best memories that pass them.
func filterSQL(q store.Query, where *strings.Builder, args *[]any) {
	where.WriteString(` AND m.workspace = ?`)
	*args = append(*args, q.Workspace)
	f := q.Filters
	if f.Source != "" {
		where.WriteString(` AND m.source = ?`)
		*args = append(*args, f.Source)
	}
	if !f.From.IsZero() {
		where.WriteString(` AND m.ts >= ?`)
		*args = append(*args, f.From.UnixMilli())
	}
	if !f.To.IsZero() {
		where.WriteString(` AND m.ts <= ?`)
		*args = append(*args, f.To.UnixMilli())
	}
	if tags := rank.Tags(f); len(tags) > 0 {
		where.WriteString(` AND m.id IN (SELECT memory_id FROM memory_tags WHERE tag IN (?` +
			strings.Repeat(`, ?`, len(tags)-1) + `) GROUP BY memory_id HAVING count(*) = ?)`)
		for _, t := range tags {
			*args = append(*args, t)
		}
		*args = append(*args, len(tags))
	}
}

// hits reads the memories and chunk texts of the ranked chunks, by chunk key.
func (s *Store) hits(ctx context.Context, chunks []int64) (map[int64]store.Hit, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+memoryColumns+`, c.text, c.id FROM chunks c JOIN memories m ON m.id = c.memory_id
		WHERE c.id IN (`+placeholders(len(chunks))+`)`, anys(chunks)...)
	if err != nil {
		return nil, fail(ctx, "lexical search", err)
	}
	defer rows.Close()
	out, err := storecore.HitsByChunk(rows, len(chunks), func(r *sql.Rows, extra ...any) (store.Memory, error) { return scanMemory(r, extra...) })
	if err != nil {
		return nil, fail(ctx, "lexical search", err)
	}
	return out, nil
}

// SearchVector ranks by cosine similarity (1 - vec_distance_cosine).
func (s *Store) SearchVector(ctx context.Context, q store.Query, vec []float32, model string) ([]store.Hit, error) {
	if len(vec) == 0 || q.Limit <= 0 {
		return nil, nil
	}
	var where strings.Builder
	b := storecore.VectorBytes(vec)
	// The length test skips vectors of another dimension, which
	// vec_distance_cosine would reject with an error for the whole query.
	args := []any{b, model, len(b)}
	filterSQL(q, &where, &args)
	args = append(args, q.Limit)
	query := `SELECT c.memory_id, c.id, min(vec_distance_cosine(c.embedding, ?)) AS d
		FROM chunks c JOIN memories m ON m.id = c.memory_id
		WHERE c.model = ? AND length(c.embedding) = ?` + where.String() + `
		GROUP BY c.memory_id ORDER BY d LIMIT ?`
	return s.ranked(ctx, "vector search", query, args, func(d float64) float64 { return 1 - d })
}

// ranked runs a ranking query returning (memory rowid, best chunk id, rank)
// and loads each ranked memory whole, all in one read transaction.
func (s *Store) ranked(ctx context.Context, op, query string, args []any, score func(float64) float64) ([]store.Hit, error) {
	if s.IsClosed() {
		return nil, storecore.ErrClosed
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fail(ctx, op, err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fail(ctx, op, err)
	}
	type ranked struct {
		mid, cid int64
		rank     float64
	}
	var rs []ranked
	for rows.Next() {
		var r ranked
		if err := rows.Scan(&r.mid, &r.cid, &r.rank); err != nil {
			rows.Close()
			return nil, fail(ctx, op, err)
		}
		rs = append(rs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fail(ctx, op, err)
	}
	rows.Close()
	hits := make([]store.Hit, 0, len(rs))
	for _, r := range rs {
		var chunk string
		m, err := scanMemory(tx.QueryRowContext(ctx,
			`SELECT `+memoryColumns+`, c.text FROM memories m JOIN chunks c ON c.id = ? WHERE m.id = ?`,
			r.cid, r.mid), &chunk)
		if err != nil {
			return nil, fail(ctx, op, err)
		}
		hits = append(hits, store.Hit{Memory: m, Score: score(r.rank), Chunk: chunk})
	}
	return hits, nil
}

// Pending lists chunks without a vector, oldest first.
func (s *Store) Pending(ctx context.Context, limit int) ([]store.PendingChunk, error) {
	if s.IsClosed() {
		return nil, storecore.ErrClosed
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, text FROM chunks WHERE embedding IS NULL ORDER BY id LIMIT ?`, limit)
	if err != nil {
		return nil, fail(ctx, "pending", err)
	}
	defer rows.Close()
	var out []store.PendingChunk
	for rows.Next() {
		var p store.PendingChunk
		if err := rows.Scan(&p.ID, &p.Text); err != nil {
			return nil, fail(ctx, "pending", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fail(ctx, "pending", err)
	}
	return out, nil
}

// SetVectors stores vectors for pending chunks in one transaction.
func (s *Store) SetVectors(ctx context.Context, model string, vecs []store.ChunkVector) error {
	if s.IsClosed() {
		return storecore.ErrClosed
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fail(ctx, "set vectors", err)
	}
	defer tx.Rollback()
	for _, v := range vecs {
		if _, err := tx.ExecContext(ctx, `UPDATE chunks SET embedding = ?, model = ? WHERE id = ?`,
			storecore.VectorBytes(v.Vector), model, v.ChunkID); err != nil {
			return fail(ctx, "set vectors", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(ctx, "set vectors", err)
	}
	return nil
}

// ForgetVectorsNotFrom marks chunks embedded by another model as pending.
func (s *Store) ForgetVectorsNotFrom(ctx context.Context, model string) (int64, error) {
	if s.IsClosed() {
		return 0, storecore.ErrClosed
	}
	res, err := s.w.ExecContext(ctx,
		`UPDATE chunks SET embedding = NULL, model = NULL WHERE embedding IS NOT NULL AND model IS NOT ?`, model)
	if err != nil {
		return 0, fail(ctx, "forget vectors", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fail(ctx, "forget vectors", err)
	}
	return n, nil
}

// Stats summarizes the store; SizeBytes counts the database and its WAL.
func (s *Store) Stats(ctx context.Context) (store.Stats, error) {
	var st store.Stats
	if s.IsClosed() {
		return st, storecore.ErrClosed
	}
	var oldest, newest sql.NullInt64
	var pages, pageSize int64
	err := s.r.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM memories),
		(SELECT count(*) FROM chunks),
		(SELECT count(*) FROM (SELECT DISTINCT workspace FROM memories)),
		(SELECT count(*) FROM chunks WHERE embedding IS NULL),
		(SELECT min(ts) FROM memories),
		(SELECT max(ts) FROM memories),
		(SELECT page_count FROM pragma_page_count()),
		(SELECT page_size FROM pragma_page_size())`).
		Scan(&st.Memories, &st.Chunks, &st.Workspaces, &st.Pending, &oldest, &newest, &pages, &pageSize)
	if err != nil {
		return st, fail(ctx, "stats", err)
	}
	if oldest.Valid {
		st.Oldest = time.UnixMilli(oldest.Int64).UTC()
		st.Newest = time.UnixMilli(newest.Int64).UTC()
	}
	st.SizeBytes = pages * pageSize
	if fi, err := os.Stat(s.path + "-wal"); err == nil {
		st.SizeBytes += fi.Size()
	}
	return st, nil
}
