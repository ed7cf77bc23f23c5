// Package memory is hearth's memory family: add_memory,
// search_memory, get_stats and delete_memory over one store that every client
// of the daemon shares, and the memory graph beside the memories: the
// official memory server's nine tools, build_graph, get_related,
// graph_status and import_graph (graph.go, graph_tools.go).
//
// The store is embedded SQLite at $HEARTH_HOME/memory.db (package
// sqlitestore), or, when HEARTH_STORE_URL names one, a PostgreSQL database
// that several daemons may share (package pgstore); Engine (engine.go) is
// the one place that chooses. Embeddings are optional: with HEARTH_EMBED_URL (an Ollama
// server's /api/embed) and HEARTH_EMBED_MODEL, chunks get vectors and search
// fuses BM25 with cosine similarity; without them search is lexical and says so.
//
// A broken store never stops the daemon: Open always succeeds, the tools
// answer the JSON-RPC -32000 "Database connection failed" error
// (docs/protocol.md) while the store is unavailable, and the store is opened
// again on a later call (at most every few seconds), so repairing the file
// needs no restart.
package memory

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/memory/embed"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// The configuration the family reads from the daemon's environment.
const (
	EnvStoreURL   = "HEARTH_STORE_URL"   // a PostgreSQL database (postgres:// URL or key/value DSN); unset: SQLite
	EnvEmbedURL   = "HEARTH_EMBED_URL"   // Ollama /api/embed URL (or the server's base URL)
	EnvEmbedModel = "HEARTH_EMBED_MODEL" // embedding model name, e.g. nomic-embed-text
)

// StoreFile is the database's name inside $HEARTH_HOME.
const StoreFile = "memory.db"

// PGSnapshotFile is where, inside $HEARTH_HOME, a daemon on PostgreSQL keeps
// its index snapshot (each daemon its own: the index is per process).
const PGSnapshotFile = "memory-pg.index"

const (
	// reopenEvery spaces attempts to open an unavailable store.
	reopenEvery = 5 * time.Second
	// backfillEvery spaces attempts to embed chunks stored without vectors.
	backfillEvery = 30 * time.Second
	// backfillBatch is how many chunks one embedder call receives.
	backfillBatch = 32
)

// Family is the memory family as the daemon holds it.
type Family struct {
	mem *Memories
	log *zap.Logger
	// engine names the store in the -32000 "Database connection failed.
	// Please check <engine> is running." message.
	engine string
	store  string // "sqlite <path>" or "postgres <user@host:port/db>", for daemon_status
}

var _ tool.Family = (*Family)(nil)

// Open opens the family; the store opens at Preload or at the first tool
// that needs it. It never fails for a broken store (the tools report it);
// a bad embedder configuration is logged and leaves search lexical.
func Open(env tool.Env) (tool.Family, error) {
	return openFamily(env, reopenEvery, backfillEvery), nil
}

// openFamily is Open with its retry intervals as parameters, for tests.
func openFamily(env tool.Env, reopen, backfill time.Duration) *Family {
	log := env.Log
	if log == nil {
		log = zap.NewNop()
	}
	getenv := env.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	eng := EngineFor(env.Home, getenv, env.Version)
	openStore := func(ctx context.Context) (store.Store, error) { return eng.Open(ctx, log) }
	var emb Embedder
	state := "none"
	url, model := getenv(EnvEmbedURL), getenv(EnvEmbedModel)
	switch {
	case url == "" && model == "":
	case url == "" || model == "":
		state = "misconfigured: set both " + EnvEmbedURL + " and " + EnvEmbedModel
		log.Error("memory: embedder disabled", zap.String("reason", state))
	default:
		c, err := embed.New(url, model)
		if err != nil {
			state = "misconfigured: " + err.Error()
			log.Error("memory: embedder disabled", zap.Error(err))
		} else {
			emb, state = c, "idle"
			log.Info("memory: embedder configured", zap.Stringer("embedder", c))
		}
	}
	mem := newMemories(openStore, emb, log, intervals{reopen: reopen, backfill: backfill}, state)
	mem.chat, mem.chatErr = newChat(getenv, log)
	return &Family{mem: mem, log: log, engine: eng.Name(), store: eng.Describe()}
}

// Preload opens the store (tool.Preloader): the daemon calls it once it
// serves, so that the store's open and its index's load do not hold up the
// clients that need no memory (docs/architecture.md, "The daemon's start").
// A memory tool called meanwhile waits for this open (storeHolder.get), as
// it would have found the store opened, or unavailable, by Open before.
func (f *Family) Preload() {
	if _, err := f.mem.stores.get(context.Background()); err != nil {
		f.log.Error("memory: store unavailable; memory tools will answer -32000 until it opens", zap.Error(err))
	}
}

// Store names the memory store: engine and file.
func (f *Family) Store() string { return f.store }

// Memories is the family's domain object (for tests and benchmarks).
func (f *Family) Memories() *Memories { return f.mem }

// Close stops background embedding and closes the store.
func (f *Family) Close() error { return f.mem.Close() }

// intervals are the family's retry periods.
type intervals struct {
	reopen   time.Duration // between attempts to open an unavailable store
	backfill time.Duration // between passes embedding pending chunks
}

// newMemories wires a Memories; with an embedder it starts the backfill loop.
func newMemories(open func(context.Context) (store.Store, error), emb Embedder, log *zap.Logger, every intervals, embedState string) *Memories {
	m := &Memories{
		stores:     &storeHolder{open: open, log: log, every: every.reopen},
		emb:        emb,
		log:        log,
		embedState: embedState,
		building:   make(chan struct{}, 1),
	}
	if emb != nil {
		m.backfill.start(m, every.backfill)
	}
	return m
}

// Close stops the backfill loop and closes the store.
func (m *Memories) Close() error {
	m.backfill.stop()
	return m.stores.close()
}

// storeHolder opens the store lazily and again after a failure.
type storeHolder struct {
	open func(context.Context) (store.Store, error)
	log  *zap.Logger

	every time.Duration // the longest wait between open attempts

	mu     sync.Mutex
	st     store.Store
	next   time.Time     // no new attempt before this
	wait   time.Duration // after the next failure: doubles up to every
	closed bool
}

func (h *storeHolder) get(ctx context.Context) (store.Store, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return nil, fmt.Errorf("%w: memory family closed", store.ErrUnavailable)
	case h.st != nil:
		return h.st, nil
	case time.Now().Before(h.next):
		return nil, fmt.Errorf("%w: last open failed; retrying after %s", store.ErrUnavailable, h.next.Format(time.RFC3339))
	}
	st, err := h.open(ctx)
	if err != nil {
		// Back off: soon after a first failure (a server restarting), then
		// at most every h.every.
		if h.wait <= 0 {
			h.wait = min(h.every, 250*time.Millisecond)
		}
		h.next = time.Now().Add(h.wait)
		h.wait = min(2*h.wait, h.every)
		return nil, err
	}
	h.st, h.wait = st, 0
	return st, nil
}

func (h *storeHolder) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.st == nil {
		return nil
	}
	return h.st.Close()
}

// backfiller embeds chunks that were stored without vectors: every retry
// interval, and at once when a use of the embedder has just succeeded.
type backfiller struct {
	wakeCh chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

func (b *backfiller) start(m *Memories, retry time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	b.wakeCh = make(chan struct{}, 1)
	b.cancel = cancel
	b.done = make(chan struct{})
	go func() {
		defer close(b.done)
		t := time.NewTimer(0) // one pass at start: earlier runs may have left chunks
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-b.wakeCh:
			case <-t.C:
			}
			n, err := m.Backfill(ctx)
			if n > 0 {
				m.log.Info("memory: embedded pending chunks", zap.Int("chunks", n))
			}
			if err != nil && ctx.Err() == nil {
				m.log.Warn("memory: embedding pending chunks failed; will retry", zap.Error(err), zap.Duration("retry", retry))
			}
			t.Reset(retry)
		}
	}()
}

// wake asks for a pass now; a pass already asked for is enough.
func (b *backfiller) wake() {
	if b.wakeCh == nil {
		return
	}
	select {
	case b.wakeCh <- struct{}{}:
	default:
	}
}

func (b *backfiller) stop() {
	if b.cancel == nil {
		return
	}
	b.cancel()
	<-b.done
}

// Backfill embeds every chunk still without a vector and reports how many it
// embedded. The first pass after the store opens also re-queues chunks
// embedded by a different model, since their vectors cannot be compared.
func (m *Memories) Backfill(ctx context.Context) (int, error) {
	if m.emb == nil {
		return 0, ErrNoEmbedder
	}
	st, err := m.stores.get(ctx)
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	forget := !m.modelChecked
	m.mu.Unlock()
	if forget {
		n, err := st.ForgetVectorsNotFrom(ctx, m.emb.Model())
		if err != nil {
			return 0, err
		}
		if n > 0 {
			m.log.Info("memory: embedding model changed; re-embedding chunks", zap.Int64("chunks", n))
		}
		m.mu.Lock()
		m.modelChecked = true
		m.mu.Unlock()
	}
	done := 0
	for {
		pending, err := st.Pending(ctx, backfillBatch)
		if err != nil || len(pending) == 0 {
			return done, err
		}
		texts := make([]string, len(pending))
		for i, p := range pending {
			texts[i] = p.Text
		}
		vecs, err := m.embed(ctx, texts)
		if err != nil {
			return done, err
		}
		cv := make([]store.ChunkVector, len(pending))
		for i, p := range pending {
			cv[i] = store.ChunkVector{ChunkID: p.ID, Vector: vecs[i]}
		}
		if err := st.SetVectors(ctx, m.emb.Model(), cv); err != nil {
			return done, err
		}
		done += len(pending)
	}
}

func sortByScore(hits []store.Hit) {
	slices.SortStableFunc(hits, func(a, b store.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
}
