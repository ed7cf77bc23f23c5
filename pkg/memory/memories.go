package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/llm"
	"github.com/hearth-mcp/hearth/pkg/memory/chunk"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/memory/terms"
	"github.com/hearth-mcp/hearth/pkg/stats"
)

// MaxTextLen is the longest memory, in characters (Unicode code points, as
// JSON Schema's maxLength counts them).
const MaxTextLen = 100_000

var (
	// ErrTooLong: the text is over MaxTextLen. The message is fixed: clients
	// match on it, and the input schema's maxLength check gives the same words.
	ErrTooLong = errors.New("content exceeds max length")
	// ErrNoEmbedder: vector ranking was asked for and no embedder is configured.
	ErrNoEmbedder = errors.New("vector search needs an embedder: set HEARTH_EMBED_URL and HEARTH_EMBED_MODEL")
	// ErrEmbedderFailed: vector ranking was asked for and the embedder failed.
	ErrEmbedderFailed = errors.New("the embedder failed; vector search is unavailable for now")
	// ErrBlank: the text has nothing but whitespace.
	ErrBlank = errors.New("text is blank")
)

// Mode is how a search ranks.
type Mode string

// The ranking modes.
const (
	Lexical Mode = "lexical" // BM25 over chunks
	Vector  Mode = "vector"  // cosine similarity of embeddings
	Hybrid  Mode = "hybrid"  // reciprocal-rank fusion of the two
)

// Embedder turns texts into vectors (package embed's Client is one).
type Embedder interface {
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Memories is the memory family's domain: chunking, embedding, ranking and
// statistics over a store. It knows nothing of JSON-RPC.
type Memories struct {
	stores *storeHolder
	emb    Embedder // nil: lexical only
	log    *zap.Logger

	searches stats.Histogram

	mu         sync.Mutex
	embedState string // "none", "idle", "ok", "failing", or "misconfigured: …"
	embedErr   string // the last embedder failure, for get_stats
	// modelChecked: vectors of other models have been re-queued (once per process).
	modelChecked bool

	backfill backfiller

	chat     llm.Chatter   // the graph's LLM extractor; nil: rules only
	chatErr  string        // why the LLM settings were refused
	building chan struct{} // holds a token while a graph build runs
}

// embedTimeout bounds the embedder's part of one add or search: a slow
// embedder delays the answer by at most this, then the memory is stored
// without vectors (they come later).
const embedTimeout = 10 * time.Second

// AddInput is one memory to add.
type AddInput struct {
	Text      string
	Metadata  store.Metadata
	Workspace string
}

// Added reports an add.
type Added struct {
	ID     string
	Chunks int
	// Embedding is "none" (no embedder), "done" or "pending" (the embedder
	// failed; vectors come later).
	Embedding string
}

// Add chunks, embeds (when it can) and durably stores one memory.
func (m *Memories) Add(ctx context.Context, in AddInput) (Added, error) {
	if utf8.RuneCountInString(in.Text) > MaxTextLen {
		return Added{}, ErrTooLong
	}
	if strings.TrimSpace(in.Text) == "" {
		return Added{}, ErrBlank
	}
	st, err := m.stores.get(ctx)
	if err != nil {
		return Added{}, err
	}
	if in.Workspace == "" {
		in.Workspace = store.DefaultWorkspace
	}
	nm := store.NewMemory{Workspace: in.Workspace, Text: in.Text, Metadata: in.Metadata, Chunks: chunk.Split(in.Text)}
	res := Added{Chunks: len(nm.Chunks), Embedding: "none"}
	if m.emb != nil {
		vecs, err := m.embed(ctx, nm.Chunks)
		switch {
		case err == nil:
			nm.Vectors, nm.Model = vecs, m.emb.Model()
			res.Embedding = "done"
		case ctx.Err() != nil:
			return Added{}, ctx.Err()
		default:
			res.Embedding = "pending"
		}
	}
	res.ID, err = st.Add(ctx, nm)
	if err != nil {
		return Added{}, err
	}
	if res.Embedding == "done" {
		m.backfill.wake() // the embedder works: catch up on what it missed
	}
	return res, nil
}

// embed calls the embedder and keeps its state for get_stats.
func (m *Memories) embed(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, embedTimeout)
	defer cancel()
	vecs, err := m.emb.Embed(ctx, texts)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.embedState, m.embedErr = "failing", err.Error()
		m.log.Warn("memory: embedder failed", zap.Error(err))
		return nil, err
	}
	m.embedState = "ok"
	return vecs, nil
}

// DefaultLimit is how many memories a search returns when it does not say.
const DefaultLimit = 10

// SearchInput is one search.
type SearchInput struct {
	Query     string
	Limit     int  // 0: DefaultLimit
	Mode      Mode // "" picks hybrid with an embedder, lexical without
	Filters   store.Filters
	Workspace string
}

// Found is one ranked memory.
type Found struct {
	Memory  store.Memory
	Score   float64
	Snippet string
}

// SearchResult is a ranking and how it was made.
type SearchResult struct {
	Mode    Mode
	Results []Found
	// Note says why the mode differs from the one asked for, or that the
	// ranking is lexical for want of an embedder.
	Note string
}

// rrfK is the constant of reciprocal-rank fusion (Cormack et al. 2009): a
// memory's fused score is Σ 1/(rrfK + rank) over the rankings it appears in.
const rrfK = 60

// snippetWidth is the length of a result's snippet, in characters.
const snippetWidth = 240

// Search ranks the workspace's memories that pass the filters.
func (m *Memories) Search(ctx context.Context, in SearchInput) (SearchResult, error) {
	start := time.Now()
	res, err := m.search(ctx, in)
	if err == nil {
		m.searches.Record(time.Since(start))
	}
	return res, err
}

func (m *Memories) search(ctx context.Context, in SearchInput) (SearchResult, error) {
	if in.Workspace == "" {
		in.Workspace = store.DefaultWorkspace
	}
	if in.Limit <= 0 {
		in.Limit = DefaultLimit
	}
	mode, note := in.Mode, ""
	switch {
	case mode == Vector && m.emb == nil:
		return SearchResult{}, ErrNoEmbedder
	case mode == "" && m.emb == nil:
		mode, note = Lexical, "no embedder configured (HEARTH_EMBED_URL, HEARTH_EMBED_MODEL): ranked lexically by BM25"
	case mode == Hybrid && m.emb == nil:
		mode, note = Lexical, "hybrid needs an embedder and none is configured: ranked lexically by BM25"
	case mode == "":
		mode = Hybrid
	}
	st, err := m.stores.get(ctx)
	if err != nil {
		return SearchResult{}, err
	}
	var qvec []float32
	if mode != Lexical {
		vecs, err := m.embed(ctx, []string{in.Query})
		switch {
		case err == nil:
			qvec = vecs[0]
			m.backfill.wake()
		case ctx.Err() != nil:
			return SearchResult{}, ctx.Err()
		case mode == Vector:
			return SearchResult{}, ErrEmbedderFailed
		default:
			mode, note = Lexical, "the embedder failed: ranked lexically by BM25"
		}
	}

	words := terms.Split(in.Query)
	q := store.Query{Workspace: in.Workspace, Filters: in.Filters, Limit: in.Limit}
	var hits []store.Hit
	switch mode {
	case Lexical:
		hits, err = st.SearchLexical(ctx, q, words)
	case Vector:
		hits, err = st.SearchVector(ctx, q, qvec, m.emb.Model())
	case Hybrid:
		hits, err = m.hybrid(ctx, st, q, words, qvec)
	default:
		return SearchResult{}, fmt.Errorf("unknown search mode %q", mode)
	}
	if err != nil {
		return SearchResult{}, err
	}
	out := SearchResult{Mode: mode, Note: note, Results: make([]Found, len(hits))}
	for i, h := range hits {
		out.Results[i] = Found{Memory: h.Memory, Score: h.Score, Snippet: terms.Snippet(h.Chunk, words, snippetWidth)}
	}
	return out, nil
}

// hybrid fuses the lexical and vector rankings. Each ranking contributes more
// candidates than the limit, so a memory ranked fairly well by both can beat
// one ranked first by only one of them.
func (m *Memories) hybrid(ctx context.Context, st store.Store, q store.Query, words []string, qvec []float32) ([]store.Hit, error) {
	limit := q.Limit
	q.Limit = min(max(3*limit, 30), 300)
	lex, err := st.SearchLexical(ctx, q, words)
	if err != nil {
		return nil, err
	}
	vec, err := st.SearchVector(ctx, q, qvec, m.emb.Model())
	if err != nil {
		return nil, err
	}
	fused := map[string]*store.Hit{}
	var order []string
	for _, ranking := range [][]store.Hit{lex, vec} {
		for rank, h := range ranking {
			f, ok := fused[h.Memory.ID]
			if !ok {
				h := h
				h.Score = 0
				f = &h
				fused[h.Memory.ID] = f
				order = append(order, h.Memory.ID)
			}
			f.Score += 1 / float64(rrfK+rank+1)
		}
	}
	out := make([]store.Hit, 0, len(order))
	for _, id := range order {
		out = append(out, *fused[id])
	}
	// Stable: on equal scores the lexical ranking (which has the snippet's words) wins.
	sortByScore(out)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Delete removes one memory.
func (m *Memories) Delete(ctx context.Context, id string) error {
	st, err := m.stores.get(ctx)
	if err != nil {
		return err
	}
	return st.Delete(ctx, id)
}

// Stats is get_stats's answer.
type Stats struct {
	Store        store.Stats
	Embedder     EmbedderState
	SearchCount  uint64
	SearchP50    time.Duration
	SearchP99    time.Duration
	AvgChunksPer float64
}

// EmbedderState says whether vectors are being made.
type EmbedderState struct {
	State     string // none, idle (configured, not used yet), ok, failing, misconfigured: …
	Model     string
	LastError string
}

// Stats summarizes the store and this process's searches.
func (m *Memories) Stats(ctx context.Context) (Stats, error) {
	st, err := m.stores.get(ctx)
	if err != nil {
		return Stats{}, err
	}
	ss, err := st.Stats(ctx)
	if err != nil {
		return Stats{}, err
	}
	out := Stats{
		Store:       ss,
		SearchCount: m.searches.Count(),
		SearchP50:   m.searches.Quantile(0.50),
		SearchP99:   m.searches.Quantile(0.99),
	}
	if ss.Memories > 0 {
		out.AvgChunksPer = float64(ss.Chunks) / float64(ss.Memories)
	}
	m.mu.Lock()
	out.Embedder = EmbedderState{State: m.embedState, LastError: m.embedErr}
	m.mu.Unlock()
	if m.emb != nil {
		out.Embedder.Model = m.emb.Model()
	}
	return out, nil
}
