package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

const workspaceProp = `"workspace_id": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$",
	"description": "Workspace that scopes the memories (letters, digits, '.', '_', '-'); default \"default\"."}`

var addMemorySchema = json.RawMessage(`{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"additionalProperties": false,
	"required": ["text"],
	"properties": {
		"text": {"type": "string", "minLength": 1, "maxLength": 100000,
			"description": "The memory's text, at most 100000 characters. Stored whole; chunked for ranking."},
		"metadata": {"type": "object", "additionalProperties": false,
			"description": "What is known about the memory besides its text.",
			"properties": {
				"source": {"type": "string", "maxLength": 256, "description": "Where it comes from (a file, URL or conversation); search can filter on it."},
				"tags": {"type": "array", "maxItems": 32, "items": {"type": "string", "minLength": 1, "maxLength": 64},
					"description": "Labels; a search can require some of them."},
				"timestamp": {"type": "string", "maxLength": 64,
					"description": "When it happened: RFC 3339 (2025-01-31T12:00:00Z) or a date (2025-01-31). Default: now."}
			}},
		` + workspaceProp + `
	}
}`)

var searchMemorySchema = json.RawMessage(`{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"additionalProperties": false,
	"required": ["query"],
	"properties": {
		"query": {"type": "string", "minLength": 1, "maxLength": 1000,
			"description": "What to look for, as plain words (no query syntax: quotes, *, NEAR, AND/OR/NOT are just text)."},
		"limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10, "description": "Most results to return (default 10)."},
		"mode": {"type": "string", "enum": ["lexical", "vector", "hybrid"],
			"description": "Ranking: lexical (BM25), vector (embeddings; needs an embedder) or hybrid (both fused). Default: hybrid with an embedder, lexical without."},
		"filters": {"type": "object", "additionalProperties": false,
			"description": "Conditions a memory must meet; applied before ranking.",
			"properties": {
				"tags": {"type": "array", "maxItems": 32, "items": {"type": "string", "minLength": 1, "maxLength": 64},
					"description": "The memory must carry every one of these tags."},
				"source": {"type": "string", "maxLength": 256, "description": "The memory's source must be exactly this."},
				"date_from": {"type": "string", "maxLength": 64, "description": "Earliest timestamp, inclusive: RFC 3339 or a date (from its start)."},
				"date_to": {"type": "string", "maxLength": 64, "description": "Latest timestamp, inclusive: RFC 3339 or a date (to its end)."}
			}},
		` + workspaceProp + `
	}
}`)

var getStatsSchema = json.RawMessage(`{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"additionalProperties": false,
	"properties": {}
}`)

var deleteMemorySchema = json.RawMessage(`{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"additionalProperties": false,
	"required": ["memory_id", "confirm"],
	"properties": {
		"memory_id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The id add_memory returned."},
		"confirm": {"const": true, "description": "Must be true: deleting cannot be undone."}
	}
}`)

// Tools declares the memory tools.
func (f *Family) Tools() []tool.Tool {
	return []tool.Tool{
		{
			Name:          "add_memory",
			Title:         "Add memory",
			Description:   "Store a text in long-term memory (durably, shared by every client). Returns its memory_id and how many chunks it was cut into for ranking.",
			InputSchema:   addMemorySchema,
			SchemaVersion: 1,
			Annotations:   tool.Annotations{},
			// Seed 003 fixes the words a client sees for an over-long text.
			ArgMessages: map[string]string{"/text maxLength": "content exceeds max length"},
			Handler:     f.addMemory,
		},
		{
			Name:          "search_memory",
			Title:         "Search memory",
			Description:   "Find stored memories by relevance to a query, with optional filters on tags, source and date. Returns ranked memories with score, a highlighted snippet and metadata.",
			InputSchema:   searchMemorySchema,
			SchemaVersion: 1,
			Annotations:   tool.Annotations{ReadOnly: true, Idempotent: true},
			Handler:       f.searchMemory,
		},
		{
			Name:          "get_stats",
			Title:         "Memory statistics",
			Description:   "Counts and health of the memory store: memories, chunks, size, oldest/newest, embedder state, search latency.",
			InputSchema:   getStatsSchema,
			SchemaVersion: 1,
			Annotations:   tool.Annotations{ReadOnly: true, Idempotent: true},
			Handler:       f.getStats,
		},
		{
			Name:          "delete_memory",
			Title:         "Delete memory",
			Description:   "Delete one memory by id (confirm must be true). NOT_FOUND when no memory has that id.",
			InputSchema:   deleteMemorySchema,
			SchemaVersion: 1,
			Annotations:   tool.Annotations{Destructive: true, Idempotent: true},
			Handler:       f.deleteMemory,
		},
	}
}

// metadataJSON is a memory's metadata as the tools take and give it.
type metadataJSON struct {
	Source    string   `json:"source"`
	Tags      []string `json:"tags"`
	Timestamp string   `json:"timestamp"`
}

func metadataOf(md store.Metadata) metadataJSON {
	tags := md.Tags
	if tags == nil {
		tags = []string{}
	}
	return metadataJSON{Source: md.Source, Tags: tags, Timestamp: md.Time.UTC().Format(time.RFC3339Nano)}
}

func workspaceOr(ws string) string {
	if ws == "" {
		return store.DefaultWorkspace
	}
	return ws
}

func (f *Family) addMemory(ctx context.Context, call *tool.Call) (any, error) {
	var args struct {
		Text      string       `json:"text"`
		Metadata  metadataJSON `json:"metadata"`
		Workspace string       `json:"workspace_id"`
	}
	if err := call.Bind(&args); err != nil {
		return nil, err
	}
	var when time.Time
	if args.Metadata.Timestamp != "" {
		t, err := parseTime(args.Metadata.Timestamp, false)
		if err != nil {
			return nil, tool.Errorf(tool.InvalidRequest, "metadata.timestamp: %v", err)
		}
		when = t
	}
	ws := workspaceOr(args.Workspace)
	res, err := f.mem.Add(ctx, AddInput{
		Text:      args.Text,
		Metadata:  store.Metadata{Source: args.Metadata.Source, Tags: args.Metadata.Tags, Time: when},
		Workspace: ws,
	})
	if err != nil {
		return nil, f.fail(call, err)
	}
	return map[string]any{
		"memory_id":    res.ID,
		"chunks":       res.Chunks,
		"workspace_id": ws,
		"embedding":    res.Embedding,
	}, nil
}

func (f *Family) searchMemory(ctx context.Context, call *tool.Call) (any, error) {
	var args struct {
		Query   string `json:"query"`
		Limit   int    `json:"limit"`
		Mode    Mode   `json:"mode"`
		Filters struct {
			Tags     []string `json:"tags"`
			Source   string   `json:"source"`
			DateFrom string   `json:"date_from"`
			DateTo   string   `json:"date_to"`
		} `json:"filters"`
		Workspace string `json:"workspace_id"`
	}
	if err := call.Bind(&args); err != nil {
		return nil, err
	}
	filters := store.Filters{Tags: args.Filters.Tags, Source: args.Filters.Source}
	var err error
	if args.Filters.DateFrom != "" {
		if filters.From, err = parseTime(args.Filters.DateFrom, false); err != nil {
			return nil, tool.Errorf(tool.InvalidRequest, "filters.date_from: %v", err)
		}
	}
	if args.Filters.DateTo != "" {
		if filters.To, err = parseTime(args.Filters.DateTo, true); err != nil {
			return nil, tool.Errorf(tool.InvalidRequest, "filters.date_to: %v", err)
		}
	}
	if !filters.From.IsZero() && !filters.To.IsZero() && filters.From.After(filters.To) {
		return nil, tool.Errorf(tool.InvalidRequest, "filters.date_from is after filters.date_to")
	}
	ws := workspaceOr(args.Workspace)
	res, err := f.mem.Search(ctx, SearchInput{Query: args.Query, Limit: args.Limit, Mode: args.Mode, Filters: filters, Workspace: ws})
	if err != nil {
		return nil, f.fail(call, err)
	}
	type result struct {
		MemoryID string       `json:"memory_id"`
		Score    float64      `json:"score"`
		Snippet  string       `json:"snippet"`
		Text     string       `json:"text"`
		Chunks   int          `json:"chunks"`
		Metadata metadataJSON `json:"metadata"`
	}
	results := make([]result, len(res.Results))
	for i, r := range res.Results {
		results[i] = result{MemoryID: r.Memory.ID, Score: r.Score, Snippet: r.Snippet, Text: r.Memory.Text,
			Chunks: r.Memory.Chunks, Metadata: metadataOf(r.Memory.Metadata)}
	}
	out := map[string]any{"mode": res.Mode, "workspace_id": ws, "count": len(results), "results": results}
	if res.Note != "" {
		out["note"] = res.Note
	}
	return out, nil
}

func (f *Family) getStats(ctx context.Context, call *tool.Call) (any, error) {
	st, err := f.mem.Stats(ctx)
	if err != nil {
		return nil, f.fail(call, err)
	}
	when := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.Format(time.RFC3339Nano)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	embedder := map[string]any{"state": st.Embedder.State}
	if st.Embedder.Model != "" {
		embedder["model"] = st.Embedder.Model
		embedder["pending_chunks"] = st.Store.Pending
	}
	if st.Embedder.LastError != "" {
		embedder["last_error"] = st.Embedder.LastError
	}
	return map[string]any{
		"store":                 "sqlite",
		"memories":              st.Store.Memories,
		"chunks":                st.Store.Chunks,
		"workspaces":            st.Store.Workspaces,
		"store_size_bytes":      st.Store.SizeBytes,
		"avg_chunks_per_memory": st.AvgChunksPer,
		"oldest_memory":         when(st.Store.Oldest),
		"newest_memory":         when(st.Store.Newest),
		"embedder":              embedder,
		"search_latency_ms":     map[string]any{"count": st.SearchCount, "p50": ms(st.SearchP50), "p99": ms(st.SearchP99)},
	}, nil
}

func (f *Family) deleteMemory(ctx context.Context, call *tool.Call) (any, error) {
	var args struct {
		MemoryID string `json:"memory_id"`
		Confirm  bool   `json:"confirm"`
	}
	if err := call.Bind(&args); err != nil {
		return nil, err
	}
	if !args.Confirm { // the schema says so already; a handler never trusts one line away
		return nil, tool.Errorf(tool.InvalidRequest, "confirm must be true")
	}
	if err := f.mem.Delete(ctx, args.MemoryID); err != nil {
		return nil, f.fail(call, err)
	}
	return map[string]any{"deleted": true, "memory_id": args.MemoryID}, nil
}

// fail maps the domain's errors to the tool contract. Store failures become the
// JSON-RPC -32000 error; what went wrong (paths included) goes to the log only.
func (f *Family) fail(call *tool.Call, err error) error {
	switch {
	case errors.Is(err, store.ErrUnavailable):
		f.log.Error("memory: store unavailable", zap.String("tool", call.Tool), zap.Error(err))
		return tool.StoreUnavailable(engine)
	case errors.Is(err, store.ErrNotFound):
		return tool.Errorf(tool.NotFound, "no memory has that memory_id")
	case errors.Is(err, ErrTooLong):
		return &tool.Error{Code: tool.InvalidRequest, Message: ErrTooLong.Error(), Fields: map[string]any{"max_length": MaxTextLen}}
	case errors.Is(err, ErrBlank):
		return tool.Errorf(tool.InvalidRequest, "%v", err)
	case errors.Is(err, ErrNoEmbedder), errors.Is(err, ErrEmbedderFailed):
		return tool.Errorf(tool.CapabilityMissing, "%v", err)
	}
	return err
}

// parseTime reads RFC 3339 or a bare date (UTC). A bare date as an upper bound
// means the end of that day.
func parseTime(s string, endOfDay bool) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("want RFC 3339 (2025-01-31T12:00:00Z) or a date (2025-01-31)")
	}
	if endOfDay {
		d = d.Add(24*time.Hour - time.Millisecond)
	}
	return d, nil
}
