// Package rank is the lexical ranking every memory store engine shares: the
// glue between an engine's rows and queries (package store) and the
// in-memory BM25 index (package lexindex). The engine keeps the only durable
// copy and reads it; rank builds the index from what it reads (Load), says
// what the index keeps of a new memory (Memory, Analyze), turns a query's
// filters into the index's (Filter), and ranks a query (Search), leaving the
// engine only to read the ranked chunks back. See
// docs/decisions/0010-memory-ranking-in-memory-index.md.
//
// What an engine must still do itself: feed the index in the order it made
// its changes (Load at open, then every committed add and delete under one
// lock), so that a key the engine reuses after a delete is never taken for
// the deleted memory's; and make adds and searches wait until Load is done.
package rank

import (
	"github.com/hearth-mcp/hearth/pkg/memory/lexindex"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// Memory is what the index keeps of a memory just stored with row id key.
func Memory(key int64, m store.NewMemory) lexindex.Memory {
	return lexindex.Memory{Key: key, Workspace: m.Workspace, Source: m.Metadata.Source, Tags: m.Metadata.Tags, Time: m.Metadata.Time.UnixMilli()}
}

// Analyze analyzes a new memory's chunks for the index: the part of indexing
// an add that can run before the engine writes it, off its writer's path.
func Analyze(chunks []string) []lexindex.Analyzed {
	docs := make([]lexindex.Analyzed, len(chunks))
	for i, c := range chunks {
		docs[i] = lexindex.Analyze(c)
	}
	return docs
}

// Filter is q's workspace and filters as the index checks them.
func Filter(q store.Query) lexindex.Filter {
	f := lexindex.Filter{Workspace: q.Workspace, Source: q.Filters.Source, Tags: Tags(q.Filters)}
	if !q.Filters.From.IsZero() {
		f.From, f.HasFrom = q.Filters.From.UnixMilli(), true
	}
	if !q.Filters.To.IsZero() {
		f.To, f.HasTo = q.Filters.To.UnixMilli(), true
	}
	return f
}

// Tags are the tags a memory must carry to pass f, each once, in order.
func Tags(f store.Filters) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range f.Tags {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Search ranks by BM25 through ix, then has read load the ranked memories
// and their best chunks, by chunk key (a chunk missing from its answer was
// deleted since the index ranked it, and is skipped). With several words,
// the index ranks more candidates than asked (candidates) so that the phrase
// bonus (lexindex.Ranking.Rerank) can lift one into the top. read's error is
// returned as it is.
func Search(ix *lexindex.Index, q store.Query, words []string, read func([]lexindex.Result) (map[int64]store.Hit, error)) ([]store.Hit, error) {
	if len(words) == 0 || q.Limit <= 0 {
		return nil, nil
	}
	k := q.Limit
	if len(words) > 1 {
		k = candidates(q.Limit)
	}
	r := ix.Search(words, Filter(q), k)
	if len(r.Results) == 0 {
		return nil, nil
	}
	rows, err := read(r.Results)
	if err != nil {
		return nil, err
	}
	r.Rerank(func(chunk int64) (string, bool) { h, ok := rows[chunk]; return h.Chunk, ok })
	hits := make([]store.Hit, 0, q.Limit)
	for _, res := range r.Results {
		h, ok := rows[res.Chunk]
		if !ok {
			continue // deleted since the index ranked it
		}
		h.Score = res.Score
		hits = append(hits, h)
		if len(hits) == q.Limit {
			break
		}
	}
	return hits, nil
}

// candidates is how many memories the index ranks for a limit when the phrase
// bonus may reorder them: a phrase match ranked just below the limit by its
// words alone can move up; one ranked far below rarely can, and every extra
// candidate makes the search slower.
func candidates(limit int) int { return limit + max(limit/2, 10) }
