package memory

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/llm"
	"github.com/hearth-mcp/hearth/pkg/memory/extract"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// The memory graph's domain: the store's graph (store.Graph) and the graph
// build, which reads stored memories and writes what an extractor finds in
// them (docs/decisions/0018-memory-graph.md).

var (
	// ErrNoGraph: the store engine keeps no graph.
	ErrNoGraph = errors.New("this memory store keeps no graph")
	// ErrNoLLM: the LLM extractor was asked for and no provider is configured.
	ErrNoLLM = errors.New("the llm extractor needs PREFLIGHTS_LLM_PROVIDER and PREFLIGHTS_LLM_MODEL (llm_provider, llm_model)")
)

// Graph returns the store's graph.
func (m *Memories) Graph(ctx context.Context) (store.Graph, error) {
	st, err := m.stores.get(ctx)
	if err != nil {
		return nil, err
	}
	g, ok := st.(store.Graph)
	if !ok {
		return nil, ErrNoGraph
	}
	return g, nil
}

// Extractor names which extractor a build uses.
type Extractor string

// The extractors.
const (
	ExtractRules Extractor = "rules" // deterministic (package extract's Rules)
	ExtractLLM   Extractor = "llm"   // the configured LLM, falling back to rules
)

// BuildInput is one build_graph.
type BuildInput struct {
	Scope     store.ExtractScope
	Rebuild   bool      // extract again what was extracted before
	Extractor Extractor // "": llm when a provider is configured, else rules
}

// BuildResult reports a build.
type BuildResult struct {
	Record  store.BuildRecord
	Pending int64 // memories of the scope still not extracted
	// Fallback: the LLM failed and the deterministic extractor took over for
	// the rest of the build.
	Fallback bool
}

// buildBatch is how many memories one durable step of a build extracts.
const buildBatch = 32

// BuildGraph extracts entities and relations from the memories of in.Scope
// that no build has extracted (all of them with Rebuild), batch by batch:
// each batch's entities, relations, links and marks commit together, so a
// build that is cancelled or fails leaves every memory either extracted
// whole or pending, and the next build goes on from there. Builds run one
// at a time; a second waits for the first. progress is called after each
// batch with the memories done and the total pending at the start.
func (m *Memories) BuildGraph(ctx context.Context, in BuildInput, progress func(done, total int64)) (BuildResult, error) {
	var res BuildResult
	ex, err := m.extractor(in.Extractor)
	if err != nil {
		return res, err
	}
	g, err := m.Graph(ctx)
	if err != nil {
		return res, err
	}
	select {
	case m.building <- struct{}{}:
		defer func() { <-m.building }()
	case <-ctx.Done():
		return res, ctx.Err()
	}
	rec := store.BuildRecord{Scope: in.Scope, Extractor: ex.Name(), Started: time.Now()}
	finish := func(status string) {
		rec.Status, rec.Finished = status, time.Now()
		res.Record = rec
		// Recorded even when the caller is gone: graph_status reports it.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := g.RecordBuild(rctx, rec); err != nil {
			m.log.Warn("memory: could not record the graph build", zap.Error(err))
		}
		if n, err := g.CountPending(rctx, in.Scope); err == nil {
			res.Pending = n
		}
	}
	if in.Rebuild {
		if err := g.ForgetExtraction(ctx, in.Scope); err != nil {
			return res, err
		}
	}
	total, err := g.CountPending(ctx, in.Scope)
	if err != nil {
		return res, err
	}
	rules := extract.Rules{}
	seen := map[string]bool{}
	for {
		if err := ctx.Err(); err != nil {
			finish("cancelled")
			return res, err
		}
		batch, err := g.PendingExtraction(ctx, in.Scope, buildBatch)
		if err == nil && len(batch) == 0 {
			finish("completed")
			return res, nil
		}
		if err != nil {
			finish(status(ctx))
			return res, err
		}
		xs := make([]store.Extraction, 0, len(batch))
		fresh := false
		for _, mem := range batch {
			fresh = fresh || !seen[mem.ID]
			seen[mem.ID] = true
			found, err := ex.Extract(ctx, mem.Text)
			if err != nil && ctx.Err() == nil && ex.Name() != rules.Name() {
				// As the clarification planner: after the LLM's retries, the
				// deterministic extractor stands in, for the rest of the build.
				m.log.Warn("memory: the LLM extractor failed; extracting with rules", zap.Error(err))
				res.Fallback, ex = true, rules
				found, err = ex.Extract(ctx, mem.Text)
			}
			if err != nil {
				finish(status(ctx))
				return res, err // nothing of this batch was written
			}
			xs = append(xs, store.Extraction{MemoryID: mem.ID, Entities: found.Entities, Relations: found.Relations, Extractor: ex.Name()})
		}
		if !fresh {
			finish("failed")
			return res, fmt.Errorf("graph build: the store keeps listing the same memories as pending")
		}
		done, err := g.ApplyExtractions(ctx, xs)
		if err != nil {
			finish(status(ctx))
			return res, err
		}
		rec.Memories += done.Memories
		rec.EntitiesCreated += done.EntitiesCreated
		rec.RelationsCreated += done.RelationsCreated
		rec.Links += done.Links
		if rec.Extractor != ex.Name() {
			rec.Extractor = rec.Extractor + ", then " + ex.Name()
		}
		if progress != nil {
			progress(rec.Memories, max(total, rec.Memories))
		}
	}
}

func status(ctx context.Context) string {
	if ctx.Err() != nil {
		return "cancelled"
	}
	return "failed"
}

// extractor picks the build's extractor.
func (m *Memories) extractor(which Extractor) (extract.Extractor, error) {
	switch which {
	case ExtractRules:
		return extract.Rules{}, nil
	case ExtractLLM:
		if m.chat == nil {
			return nil, ErrNoLLM
		}
		return extract.LLM{Chat: m.chat}, nil
	case "":
		if m.chat != nil {
			return extract.LLM{Chat: m.chat}, nil
		}
		return extract.Rules{}, nil
	}
	return nil, fmt.Errorf("unknown extractor %q", which)
}

// llmState says whether builds can use an LLM, for graph_status.
func (m *Memories) llmState() string {
	switch {
	case m.chat != nil:
		return "configured (" + m.chat.Name() + ")"
	case m.chatErr != "":
		return "misconfigured: " + m.chatErr
	}
	return "none"
}

// newChat reads the LLM provider settings the clarification family uses.
func newChat(getenv func(string) string, log *zap.Logger) (llm.Chatter, string) {
	chat, err := llm.FromEnv(getenv)
	if err != nil {
		log.Warn("memory: the graph's LLM extractor is not used: builds extract with rules", zap.Error(err))
		return nil, err.Error()
	}
	return chat, ""
}
