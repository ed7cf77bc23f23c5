// Package storecore is what both memory engines (sqlitestore, pgstore) keep
// beside their SQL: the in-memory lexical index and the change it reflects,
// its snapshot, the memory graph served from memory, the queues an add and a
// graph write wait in for the engine's group commit, and the graph writes
// that are one engine-neutral plan (package graphwrite) run in the engine's
// transaction. An engine embeds one Core and supplies its statements; the
// two engines then differ only where their SQL does.
package storecore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/memory/graphindex"
	"github.com/hearth-mcp/hearth/pkg/memory/graphwrite"
	"github.com/hearth-mcp/hearth/pkg/memory/lexindex"
	"github.com/hearth-mcp/hearth/pkg/memory/rank"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// ErrClosed is every call's answer once the store is closing.
var ErrClosed = fmt.Errorf("%w: store closed", store.ErrUnavailable)

// Core is the engine-neutral state of a memory store. Tx is the engine's
// view of one write transaction, which graph writes run in.
type Core[Tx any] struct {
	ID       string      // the store's id, which stamps snapshots
	Snapshot string      // the index snapshot's file ("" keeps none)
	Log      *zap.Logger // what the store does on its own

	// ix ranks lexically (Index). It changes, in the order the database made
	// the changes, only under Indexing; Applied is the last change it reflects,
	// AppliedMem that change's memory, Saved the change the snapshot on disk
	// reflects (-1: none).
	ix         atomic.Pointer[lexindex.Index]
	Indexing   sync.Mutex
	Applied    int64
	AppliedMem int64
	Saved      int64
	From       string // where the index came from: "snapshot" or "database"
	// graph is the memory graph, served from memory. Both pointers change
	// only while loading and when a log the process lags behind was pruned
	// (pgstore); reads take them without waiting for a writer.
	graph atomic.Pointer[graphindex.Index]

	Adds    chan *AddRequest // adds for the engine's writer
	Ops     chan *Op[Tx]     // graph writes for the engine's writer
	Closing chan struct{}    // closed when the store starts closing

	// ready is closed once the index and graph are loaded (or loading
	// failed: loadErr). Open does not wait for it, so a large store does
	// not delay the daemon's start; the calls that need them wait instead.
	ready   chan struct{}
	loadErr error

	// analyze has Add analyze its chunks off the writer's path, for an
	// engine that indexes its own adds as it commits them.
	analyze bool
	// check refuses a memory the engine cannot keep (nil: none).
	check func(store.NewMemory) error
	// rows are the engine's row operations inside a write transaction.
	rows func(Tx) graphwrite.Rows
	// probe and boundCtx: Config.Probe and Config.Bound.
	probe    func(ctx context.Context, op string) error
	boundCtx func(context.Context) (context.Context, context.CancelFunc)
	// fresh, hits, mentions, mentionedIn: Config's.
	fresh       func(ctx context.Context) error
	hits        func(ctx context.Context, chunks []int64) (map[int64]store.Hit, error)
	mentions    func(ctx context.Context, memoryIDs []string) (map[string][]string, error)
	mentionedIn func(ctx context.Context, ws string, names []string, limit int) (map[string][]store.MemoryRef, error)
}

// Config is what an engine tells its Core.
type Config[Tx any] struct {
	ID       string
	Snapshot string
	Log      *zap.Logger
	// Analyze: Add analyzes each memory's chunks for the writer (AddRequest.Docs).
	Analyze bool
	// Check refuses a memory the engine cannot keep, before it is queued,
	// so it cannot fail the adds committed beside it.
	Check func(store.NewMemory) error
	// Rows are the engine's row operations inside a write transaction.
	Rows func(Tx) graphwrite.Rows
	// Probe runs before every graph read once the graph is loaded (nil:
	// none): an engine whose graph other processes write catches up here.
	Probe func(ctx context.Context, op string) error
	// Bound bounds one operation (nil: the caller's context as it is).
	Bound func(context.Context) (context.Context, context.CancelFunc)
	// Fresh runs before every lexical search once the index is loaded
	// (nil: none): an engine whose memories other processes write catches
	// the index up here.
	Fresh func(ctx context.Context) error
	// Hits reads the ranked chunks (by key) with their memories.
	Hits func(ctx context.Context, chunks []int64) (map[int64]store.Hit, error)
	// Mentions and MentionedIn are store.Graph's, for ids and names already
	// unique and not empty, on a store not closed.
	Mentions    func(ctx context.Context, memoryIDs []string) (map[string][]string, error)
	MentionedIn func(ctx context.Context, ws string, names []string, limit int) (map[string][]store.MemoryRef, error)
}

// Init sets c up; the engine then loads (Loaded) and starts its writer.
func (c *Core[Tx]) Init(cfg Config[Tx]) {
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	c.ID, c.Snapshot, c.Log = cfg.ID, cfg.Snapshot, cfg.Log
	c.analyze, c.check, c.rows = cfg.Analyze, cfg.Check, cfg.Rows
	c.probe, c.boundCtx = cfg.Probe, cfg.Bound
	c.fresh, c.hits, c.mentions, c.mentionedIn = cfg.Fresh, cfg.Hits, cfg.Mentions, cfg.MentionedIn
	c.Saved = -1 // no snapshot on disk yet
	c.ready = make(chan struct{})
	c.Adds = make(chan *AddRequest)
	c.Ops = make(chan *Op[Tx])
	c.Closing = make(chan struct{})
}

// Loaded records the end of loading: err (wrapped as the engine chose) is
// what every call needing the index answers from now on.
func (c *Core[Tx]) Loaded(err error) {
	c.loadErr = err
	close(c.ready)
}

// LoadErr is the load's failure, once loading ended (Ready).
func (c *Core[Tx]) LoadErr() error { return c.loadErr }

// Ready is closed once loading ended.
func (c *Core[Tx]) Ready() <-chan struct{} { return c.ready }

// AwaitLoaded waits until loading ended; false when it failed or the store
// began closing first (a background loop then has nothing to do).
func (c *Core[Tx]) AwaitLoaded() bool {
	select {
	case <-c.ready:
		return c.loadErr == nil
	case <-c.Closing:
		return false
	}
}

// Index is the lexical index.
func (c *Core[Tx]) Index() *lexindex.Index { return c.ix.Load() }

// SetIndex replaces the lexical index: the engine holds Indexing, and sets
// Applied and AppliedMem to what ix reflects.
func (c *Core[Tx]) SetIndex(ix *lexindex.Index) { c.ix.Store(ix) }

// GraphIndex is the memory graph.
func (c *Core[Tx]) GraphIndex() *graphindex.Index { return c.graph.Load() }

// SetGraphIndex replaces the memory graph (the engine serializes its
// changes).
func (c *Core[Tx]) SetGraphIndex(g *graphindex.Index) { c.graph.Store(g) }

// IsClosed reports whether the store is closing.
func (c *Core[Tx]) IsClosed() bool {
	select {
	case <-c.Closing:
		return true
	default:
		return false
	}
}

// Indexed waits until the index is loaded.
func (c *Core[Tx]) Indexed(ctx context.Context) error {
	select {
	case <-c.ready:
		return c.loadErr
	case <-ctx.Done():
		return ctx.Err()
	case <-c.Closing:
		return ErrClosed
	}
}

// Writable answers a write that changes nothing as the store would answer
// one that does: an error when it is closed or did not load.
func (c *Core[Tx]) Writable(ctx context.Context) error {
	if c.IsClosed() {
		return ErrClosed
	}
	return c.Indexed(ctx)
}

// LoadedFrom waits until the index is loaded and says where it came from:
// "snapshot" or "database" (rebuilt).
func (c *Core[Tx]) LoadedFrom(ctx context.Context) (string, error) {
	if err := c.Indexed(ctx); err != nil {
		return "", err
	}
	return c.From, nil
}

// AddRequest is one add waiting for the engine's group commit.
type AddRequest struct {
	Ctx  context.Context
	M    store.NewMemory
	Docs []lexindex.Analyzed // M.Chunks analyzed by the caller (Config.Analyze)
	Done chan AddResult      // buffered: the writer never blocks on an abandoned Add
}

// AddResult answers an AddRequest.
type AddResult struct {
	ID  string
	Err error
}

// Add queues m for the engine's writer and waits until it is committed
// (and indexed: the writer answers only then).
func (c *Core[Tx]) Add(ctx context.Context, m store.NewMemory) (string, error) {
	if len(m.Chunks) == 0 {
		return "", errors.New("add memory: no chunks")
	}
	if m.Vectors != nil && len(m.Vectors) != len(m.Chunks) {
		return "", fmt.Errorf("add memory: %d vectors for %d chunks", len(m.Vectors), len(m.Chunks))
	}
	if c.check != nil {
		if err := c.check(m); err != nil {
			return "", err
		}
	}
	req := &AddRequest{Ctx: ctx, M: m, Done: make(chan AddResult, 1)}
	if c.analyze {
		req.Docs = rank.Analyze(m.Chunks)
	}
	select {
	case c.Adds <- req:
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.Closing:
		return "", ErrClosed
	}
	// Once handed over, the writer always answers (commit, failure or close).
	select {
	case res := <-req.Done:
		return res.ID, res.Err
	case <-ctx.Done():
		// The add may still commit; the caller will not be told it did.
		return "", ctx.Err()
	}
}

// Live answers the requests of batch whose caller has gone, and returns the
// others: a group commit's transaction is bound to no one caller's context.
func Live(batch []*AddRequest) []*AddRequest {
	live := batch[:0]
	for _, req := range batch {
		if err := req.Ctx.Err(); err != nil {
			req.Done <- AddResult{Err: err}
			continue
		}
		live = append(live, req)
	}
	return live
}

// Op is one graph write waiting for the engine's group commit.
type Op[Tx any] struct {
	Ctx  context.Context
	WS   string // the workspace whose keys it removes ("" when it removes none)
	Long bool   // an import: its batch may take longer
	Run  func(ctx context.Context, tx Tx) ([]*graphindex.Change, error)
	Done chan error // buffered
}

// LiveOps is Live for graph writes.
func LiveOps[Tx any](ops []*Op[Tx]) []*Op[Tx] {
	live := ops[:0]
	for _, op := range ops {
		if err := op.Ctx.Err(); err != nil {
			op.Done <- err
			continue
		}
		live = append(live, op)
	}
	return live
}

// Write queues a graph write for the engine's writer and waits for its
// commit (and its change in the graph: the writer answers only then).
func (c *Core[Tx]) Write(ctx context.Context, ws string, long bool, run func(ctx context.Context, tx Tx) ([]*graphindex.Change, error)) error {
	if err := c.Writable(ctx); err != nil {
		return err
	}
	op := &Op[Tx]{Ctx: ctx, WS: ws, Long: long, Run: run, Done: make(chan error, 1)}
	select {
	case c.Ops <- op:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.Closing:
		return ErrClosed
	}
	select {
	case err := <-op.Done:
		return err
	case <-ctx.Done():
		return ctx.Err() // it may still commit; the caller will not be told
	}
}

// CreateEntities creates the entities whose names are new.
func (c *Core[Tx]) CreateEntities(ctx context.Context, ws string, es []store.Entity) ([]store.Entity, error) {
	es = store.UniqueEntities(es, false)
	var out []store.Entity
	err := c.Write(ctx, "", false, func(ctx context.Context, tx Tx) ([]*graphindex.Change, error) {
		var ch *graphindex.Change
		var err error
		out, ch, err = graphwrite.CreateEntities(ctx, c.rows(tx), ws, es)
		return one(ch, err)
	})
	return out, err
}

// CreateRelations creates the relations that are new.
func (c *Core[Tx]) CreateRelations(ctx context.Context, ws string, rs []store.Relation) ([]store.Relation, error) {
	rs = store.UniqueRelations(rs)
	var out []store.Relation
	err := c.Write(ctx, "", false, func(ctx context.Context, tx Tx) ([]*graphindex.Change, error) {
		var ch *graphindex.Change
		var err error
		out, ch, err = graphwrite.CreateRelations(ctx, c.rows(tx), ws, rs)
		return one(ch, err)
	})
	return out, err
}

// AddObservations adds observations to existing entities, all or nothing.
func (c *Core[Tx]) AddObservations(ctx context.Context, ws string, adds []store.ObservationAdd) ([]store.ObservationsAdded, error) {
	var out []store.ObservationsAdded
	err := c.Write(ctx, "", false, func(ctx context.Context, tx Tx) ([]*graphindex.Change, error) {
		var ch *graphindex.Change
		var err error
		out, ch, err = graphwrite.AddObservations(ctx, c.rows(tx), ws, adds)
		return one(ch, err)
	})
	return out, err
}

// Import merges a whole graph in one step.
func (c *Core[Tx]) Import(ctx context.Context, ws string, g store.Subgraph) (store.ImportResult, error) {
	es, rs := store.UniqueEntities(g.Entities, true), store.UniqueRelations(g.Relations)
	var res store.ImportResult
	err := c.Write(ctx, "", true, func(ctx context.Context, tx Tx) ([]*graphindex.Change, error) {
		ch, r, err := graphwrite.Merge(ctx, c.rows(tx), ws, es, rs)
		res = r
		return one(ch, err)
	})
	return res, err
}

// DeleteEntities removes entities, the relations naming them and their links.
func (c *Core[Tx]) DeleteEntities(ctx context.Context, ws string, names []string) error {
	names = store.UniqueStrings(names)
	if len(names) == 0 {
		return c.Writable(ctx)
	}
	return c.Write(ctx, ws, false, func(ctx context.Context, tx Tx) ([]*graphindex.Change, error) {
		return one(graphwrite.DeleteEntities(ctx, c.rows(tx), ws, names))
	})
}

// DeleteObservations removes observations of existing entities.
func (c *Core[Tx]) DeleteObservations(ctx context.Context, ws string, dels []store.ObservationDelete) error {
	if !slices.ContainsFunc(dels, func(d store.ObservationDelete) bool { return len(d.Observations) > 0 }) {
		return c.Writable(ctx)
	}
	return c.Write(ctx, ws, false, func(ctx context.Context, tx Tx) ([]*graphindex.Change, error) {
		return one(graphwrite.DeleteObservations(ctx, c.rows(tx), ws, dels))
	})
}

// DeleteRelations removes the given triples.
func (c *Core[Tx]) DeleteRelations(ctx context.Context, ws string, rs []store.Relation) error {
	rs = store.UniqueRelations(rs)
	if len(rs) == 0 {
		return c.Writable(ctx)
	}
	return c.Write(ctx, ws, false, func(ctx context.Context, tx Tx) ([]*graphindex.Change, error) {
		return one(graphwrite.DeleteRelations(ctx, c.rows(tx), ws, rs))
	})
}

// ApplyExtractions writes what the extractor found, memory by memory, in one
// transaction.
func (c *Core[Tx]) ApplyExtractions(ctx context.Context, xs []store.Extraction) (store.BuildRecord, error) {
	var rec store.BuildRecord
	err := c.Write(ctx, "", false, func(ctx context.Context, tx Tx) ([]*graphindex.Change, error) {
		var changes []*graphindex.Change
		var err error
		changes, rec, err = graphwrite.ApplyExtractions(ctx, c.rows(tx), xs)
		return changes, err
	})
	return rec, err
}

func one(c *graphindex.Change, err error) ([]*graphindex.Change, error) {
	if err != nil {
		return nil, err
	}
	return []*graphindex.Change{c}, nil
}

// LoadSnapshot sets Ix from the snapshot if it is whole, of this store, and
// names a change the log still has with the same memory (memoryOf looks it
// up). Anything else is to be rebuilt: false.
func (c *Core[Tx]) LoadSnapshot(memoryOf func(seq int64) (mem int64, found bool, err error)) bool {
	if c.Snapshot == "" {
		return false
	}
	ix, st, why := rank.TrustedSnapshot(c.Snapshot, c.ID, memoryOf)
	if ix == nil {
		if why != "" {
			c.Log.Warn("memory: index snapshot not used; rebuilding", zap.String("reason", why))
		}
		return false
	}
	c.ix.Store(ix)
	c.Applied, c.AppliedMem, c.Saved = st.Seq, st.Memory, st.Seq
	return true
}

// LoadIndex sets Ix from the snapshot (snapshot), else from the database
// (rebuild), then catches up with the log (catchUp), and logs how. It
// reports whether the index was rebuilt, and so wants saving.
func (c *Core[Tx]) LoadIndex(snapshot func() bool, rebuild, catchUp func() error) (rebuilt bool, err error) {
	start := time.Now()
	c.From = "snapshot"
	if !snapshot() {
		c.From = "database"
		if err := rebuild(); err != nil {
			return false, err
		}
	}
	before := c.Applied
	if err := catchUp(); err != nil {
		return false, err
	}
	c.Log.Info("memory: search index loaded", zap.String("from", c.From), zap.Int("memories", c.Index().Memories()),
		zap.Int64("caught_up", c.Applied-before), zap.Duration("took", time.Since(start)))
	return c.From == "database" && c.Snapshot != "", nil
}

// SaveSnapshot writes the index with the change it reflects. Changes wait
// meanwhile, so the stamp matches the index.
func (c *Core[Tx]) SaveSnapshot() {
	if c.Snapshot == "" {
		return
	}
	c.Indexing.Lock()
	defer c.Indexing.Unlock()
	if c.Saved == c.Applied {
		return
	}
	start := time.Now()
	if err := rank.SaveSnapshot(c.Snapshot, c.Index(), rank.Stamp{Store: c.ID, Seq: c.Applied, Memory: c.AppliedMem}); err != nil {
		c.Log.Warn("memory: saving the index snapshot failed", zap.Error(err))
		return
	}
	c.Saved = c.Applied
	c.Log.Info("memory: index snapshot saved", zap.Int64("change", c.Applied), zap.Duration("took", time.Since(start)))
}

// SnapshotEvery and SnapshotAfter: a running store saves the index snapshot
// again when that many changes have come since the last save, so a process
// killed later catches up on few.
const (
	SnapshotEvery = 10 * time.Minute
	SnapshotAfter = 1000
)

// SaveIfStale saves the snapshot when SnapshotAfter changes have come since
// the last save: the engine's writer calls it every SnapshotEvery.
func (c *Core[Tx]) SaveIfStale() {
	c.Indexing.Lock()
	unsaved := c.Applied - c.Saved
	c.Indexing.Unlock()
	if unsaved >= SnapshotAfter {
		c.SaveSnapshot()
	}
}

// Readable waits for the graph, then runs the engine's probe (Config.Probe):
// a read answers from the graph as it stands once both pass.
func (c *Core[Tx]) Readable(ctx context.Context, op string) error {
	if c.IsClosed() {
		return ErrClosed
	}
	if err := c.Indexed(ctx); err != nil {
		return err
	}
	if c.probe == nil {
		return nil
	}
	return c.probe(ctx, op)
}

// bound is ctx as the engine bounds one operation (Config.Bound).
func (c *Core[Tx]) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.boundCtx == nil {
		return ctx, func() {}
	}
	return c.boundCtx(ctx)
}

// ReadGraph pages through ws's graph from the in-memory graph.
func (c *Core[Tx]) ReadGraph(ctx context.Context, ws, cursor string, limit int) (store.GraphPage, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	if err := c.Readable(ctx, "read graph"); err != nil {
		return store.GraphPage{}, err
	}
	return c.GraphIndex().Page(ws, cursor, limit)
}

// SearchNodes ranks ws's entities in the in-memory graph.
func (c *Core[Tx]) SearchNodes(ctx context.Context, ws, query string, limit int) (store.SearchResult, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	if err := c.Readable(ctx, "search nodes"); err != nil {
		return store.SearchResult{}, err
	}
	return c.GraphIndex().Search(ws, query, limit), nil
}

// OpenNodes reads entities by name from the in-memory graph.
func (c *Core[Tx]) OpenNodes(ctx context.Context, ws string, names []string) (store.Subgraph, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	if err := c.Readable(ctx, "open nodes"); err != nil {
		return store.Subgraph{}, err
	}
	return c.GraphIndex().Open(ws, names), nil
}

// Related walks the in-memory graph.
func (c *Core[Tx]) Related(ctx context.Context, q store.RelatedQuery) ([]store.Related, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	if err := c.Readable(ctx, "related"); err != nil {
		return nil, err
	}
	out, _, ok := c.GraphIndex().Related(q)
	if !ok {
		return nil, store.ErrNotFound
	}
	return out, nil
}

// VectorBytes encodes a vector as both engines keep it: little-endian
// float32s (sqlite-vec's layout).
func VectorBytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// Loop is how an engine's writer goroutine runs (Core.Serve).
type Loop[Tx any] struct {
	Adds bool // it takes adds
	Ops  bool // it takes graph writes
	Max  int  // at most this many requests share one commit
	// Wake and every Poll (0: never) call CatchUp: another process wrote.
	Wake    <-chan struct{}
	Poll    time.Duration
	CatchUp func()
	// Snapshots: every SnapshotEvery, save the index snapshot if stale.
	Snapshots bool
	// Commit commits one group: what waited when the first request came.
	Commit func(adds []*AddRequest, ops []*Op[Tx])
}

// Serve is an engine's writer: it waits for a request, gathers what else
// waits then (everything waiting when a commit starts shares it), and
// commits the group, until the store closes.
func (c *Core[Tx]) Serve(l Loop[Tx]) {
	var adds <-chan *AddRequest
	var ops <-chan *Op[Tx]
	var poll, snap <-chan time.Time
	if l.Adds {
		adds = c.Adds
	}
	if l.Ops {
		ops = c.Ops
	}
	if l.Poll > 0 {
		t := time.NewTicker(l.Poll)
		defer t.Stop()
		poll = t.C
	}
	if l.Snapshots {
		t := time.NewTicker(SnapshotEvery)
		defer t.Stop()
		snap = t.C
	}
	for {
		var as []*AddRequest
		var os []*Op[Tx]
		select {
		case req := <-adds:
			as = append(as, req)
		case op := <-ops:
			os = append(os, op)
		case <-l.Wake:
			l.CatchUp()
			continue
		case <-poll:
			l.CatchUp()
			continue
		case <-snap:
			c.SaveIfStale()
			continue
		case <-c.Closing:
			return
		}
	gather:
		for len(as)+len(os) < l.Max {
			select {
			case req := <-adds:
				as = append(as, req)
			case op := <-ops:
				os = append(os, op)
			default:
				break gather
			}
		}
		l.Commit(as, os)
	}
}

// SearchLexical ranks through the in-memory index (rank.Search), then reads
// the ranked memories and their best chunks (Config.Hits).
func (c *Core[Tx]) SearchLexical(ctx context.Context, q store.Query, words []string) ([]store.Hit, error) {
	if len(words) == 0 || q.Limit <= 0 {
		return nil, nil
	}
	if err := c.Indexed(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	if c.fresh != nil {
		if err := c.fresh(ctx); err != nil {
			return nil, err
		}
	}
	return rank.Search(c.Index(), q, words, func(results []lexindex.Result) (map[int64]store.Hit, error) {
		keys := make([]int64, len(results))
		for i, r := range results {
			keys[i] = r.Chunk
		}
		return c.hits(ctx, keys)
	})
}

// Rows are a query's result rows, as both engines' drivers give them.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// HitsByChunk reads rows of a memory's columns followed by a chunk's text
// and key (scan reads the memory, then extra) into hits by chunk key.
func HitsByChunk[R Rows](rows R, n int, scan func(row R, extra ...any) (store.Memory, error)) (map[int64]store.Hit, error) {
	out := make(map[int64]store.Hit, n)
	for rows.Next() {
		var h store.Hit
		var key int64
		var err error
		if h.Memory, err = scan(rows, &h.Chunk, &key); err != nil {
			return nil, err
		}
		out[key] = h
	}
	return out, rows.Err()
}

// Mentions names the entities each memory mentions.
func (c *Core[Tx]) Mentions(ctx context.Context, memoryIDs []string) (map[string][]string, error) {
	if len(memoryIDs) == 0 {
		return map[string][]string{}, nil
	}
	if c.IsClosed() {
		return nil, ErrClosed
	}
	return c.mentions(ctx, store.UniqueStrings(memoryIDs))
}

// MentionedIn lists the newest memories mentioning each entity.
func (c *Core[Tx]) MentionedIn(ctx context.Context, ws string, names []string, limit int) (map[string][]store.MemoryRef, error) {
	if c.IsClosed() {
		return nil, ErrClosed
	}
	names = store.UniqueStrings(names)
	if len(names) == 0 || limit <= 0 {
		return map[string][]store.MemoryRef{}, nil
	}
	return c.mentionedIn(ctx, ws, names, limit)
}
