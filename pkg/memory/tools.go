package memory

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// workspaceID is the workspace_id argument of the tools that read or write
// memories.
var workspaceID = tool.Prop("workspace_id", `{"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$", "title": "Workspace",
	"description": "Workspace that scopes the memories (letters, digits, '.', '_', '-'); default \"default\"."}`)

// tagsProp is a list of tags, as a memory carries them.
const tagsProp = `"type": "array", "maxItems": 32, "items": {"type": "string", "minLength": 1, "maxLength": 64}, "title": "Tags"`

var addMemorySchema = tool.Object(
	tool.Prop("text", `{"type": "string", "minLength": 1, "maxLength": 100000, "title": "Text",
		"description": "The memory's text, at most 100000 characters. Stored whole; chunked for ranking."}`).Required(),
	tool.Prop("metadata", `{"type": "object", "additionalProperties": false, "title": "Metadata",
		"description": "What is known about the memory besides its text.",
		"properties": {
			"source": {"type": "string", "maxLength": 256, "title": "Source", "description": "Where it comes from (a file, URL or conversation); search can filter on it."},
			"tags": {`+tagsProp+`, "description": "Labels; a search can require some of them."},
			"timestamp": {"type": "string", "maxLength": 64, "title": "Timestamp",
				"description": "When it happened: RFC 3339 (2025-01-31T12:00:00Z) or a date (2025-01-31). Default: now."}
		}}`),
	workspaceID,
)

// addArgs are add_memory's arguments.
type addArgs struct {
	Text      string       `json:"text"`
	Metadata  metadataArgs `json:"metadata,omitempty"`
	Workspace string       `json:"workspace_id,omitempty"`
}

// metadataArgs is a memory's metadata as add_memory takes it.
type metadataArgs struct {
	Source    string   `json:"source,omitempty"`
	Tags      []string `json:"tags,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
}

var searchMemorySchema = tool.Object(
	tool.Prop("query", `{"type": "string", "minLength": 1, "maxLength": 1000, "title": "Query",
		"description": "What to look for, as plain words (no query syntax: quotes, *, NEAR, AND/OR/NOT are just text)."}`).Required(),
	tool.Limit(DefaultLimit, 100, "results"),
	tool.Prop("mode", `{"type": "string", "enum": ["lexical", "vector", "hybrid"], "title": "Ranking",
		"description": "Ranking: lexical (BM25), vector (embeddings; needs an embedder) or hybrid (both fused). Default: hybrid with an embedder, lexical without."}`),
	tool.Prop("filters", `{"type": "object", "additionalProperties": false, "title": "Filters",
		"description": "Conditions a memory must meet; applied before ranking.",
		"properties": {
			"tags": {`+tagsProp+`, "description": "The memory must carry every one of these tags."},
			"source": {"type": "string", "maxLength": 256, "title": "Source", "description": "The memory's source must be exactly this."},
			"date_from": {"type": "string", "maxLength": 64, "title": "From", "description": "Earliest timestamp, inclusive: RFC 3339 or a date (from its start)."},
			"date_to": {"type": "string", "maxLength": 64, "title": "To", "description": "Latest timestamp, inclusive: RFC 3339 or a date (to its end)."}
		}}`),
	workspaceID,
)

// searchArgs are search_memory's arguments. Limit is 0 when absent (the
// schema refuses 0): Memories.Search applies the default.
type searchArgs struct {
	Query     string      `json:"query"`
	Limit     int         `json:"limit,omitempty"`
	Mode      Mode        `json:"mode,omitempty"`
	Filters   filtersArgs `json:"filters,omitempty"`
	Workspace string      `json:"workspace_id,omitempty"`
}

type filtersArgs struct {
	Tags     []string `json:"tags,omitempty"`
	Source   string   `json:"source,omitempty"`
	DateFrom string   `json:"date_from,omitempty"`
	DateTo   string   `json:"date_to,omitempty"`
}

var deleteMemorySchema = tool.Object(
	tool.Prop("memory_id", `{"type": "string", "minLength": 1, "maxLength": 64, "title": "Memory id", "description": "The id add_memory returned."}`).Required(),
	tool.Prop("confirm", `{"type": "boolean", "const": true, "title": "Confirm", "description": "Must be true: deleting cannot be undone."}`).Required(),
)

type deleteArgs struct {
	MemoryID string `json:"memory_id"`
	Confirm  bool   `json:"confirm"`
}

// Tools declares the memory tools and the graph's (graph_tools.go).
func (f *Family) Tools() []tool.Tool {
	tools := append(f.memoryTools(), f.graphTools()...)
	for i := range tools {
		tools[i].Handler = refuseNUL(tools[i].Handler)
	}
	return tools
}

// refuseNUL answers INVALID_REQUEST, naming the argument, for a call whose
// arguments hold U+0000 in any string. PostgreSQL's text cannot keep it, so
// a memory or a name holding one would fail there as a store error, and
// with it every write committed in the same group; SQLite could keep it,
// but both engines must answer alike, so neither is ever handed one.
func refuseNUL(h tool.Handler) tool.Handler {
	return func(ctx context.Context, call *tool.Call) (any, error) {
		doc, err := call.Doc()
		if err != nil {
			return nil, err
		}
		if path, ok := nulAt(doc, doc.Root(), ""); ok {
			if path == "" {
				path = "/"
			}
			return nil, tool.Errorf(tool.InvalidRequest, "%s: a NUL character (U+0000) is not kept by the memory store", path)
		}
		return h(ctx, call)
	}
}

// nulAt finds a string (or member name) holding U+0000 under n and returns
// its RFC 6901 path.
func nulAt(d *jsonval.Doc, n *jsonval.Node, path string) (string, bool) {
	switch n.Kind() {
	case jsonval.String:
		return path, strings.IndexByte(d.Str(n), 0) >= 0
	case jsonval.Array:
		it := d.Kids(n)
		for i, k := 0, it.Next(); k != nil; i, k = i+1, it.Next() {
			if p, ok := nulAt(d, k, path+"/"+strconv.Itoa(i)); ok {
				return p, true
			}
		}
	case jsonval.Object:
		it := d.Kids(n)
		for k := it.Next(); k != nil; k = it.Next() {
			key := d.Key(k)
			p := path + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
			if strings.IndexByte(key, 0) >= 0 {
				return p, true
			}
			if p, ok := nulAt(d, k, p); ok {
				return p, true
			}
		}
	}
	return "", false
}

func (f *Family) memoryTools() []tool.Tool {
	return []tool.Tool{
		tool.For(tool.Tool{
			Name:          "add_memory",
			Title:         "Add memory",
			Description:   "Store a text in long-term memory (durably, shared by every client). Returns its memory_id and how many chunks it was cut into for ranking.",
			InputSchema:   addMemorySchema,
			OutputSchema:  addMemoryOut,
			SchemaVersion: 3, // 2: titles on the arguments. 3: outputSchema
			Annotations:   tool.Annotations{},
			// Clients match these words for an over-long text: keep them.
			ArgMessages: map[string]string{"/text maxLength": "content exceeds max length"},
		}, f.addMemory),
		tool.For(tool.Tool{
			Name:          "search_memory",
			Title:         "Search memory",
			Description:   "Find stored memories by relevance to a query, with optional filters on tags, source and date. Returns ranked memories with score, a highlighted snippet, metadata and the graph entities each mentions (build_graph links them).",
			InputSchema:   searchMemorySchema,
			SchemaVersion: 4, // 2: titles on the arguments; limit's description gives its maximum. 3: results name their entities. 4: outputSchema
			Annotations:   tool.Annotations{ReadOnly: true, Idempotent: true},
		}, f.searchMemory),
		tool.For(tool.Tool{
			Name:          "get_stats",
			Title:         "Memory statistics",
			Description:   "Counts and health of the memory store: memories, chunks, size, oldest/newest, embedder state, search latency, and the graph: entities, relations, links and the entities memories mention most.",
			InputSchema:   tool.Object(),
			SchemaVersion: 3, // 2: the graph's counts and most-mentioned entities. 3: outputSchema
			Annotations:   tool.Annotations{ReadOnly: true, Idempotent: true},
		}, f.getStats),
		tool.For(tool.Tool{
			Name:          "delete_memory",
			Title:         "Delete memory",
			Description:   "Delete one memory by id (confirm must be true). NOT_FOUND when no memory has that id.",
			InputSchema:   deleteMemorySchema,
			OutputSchema:  deleteMemoryOut,
			SchemaVersion: 3, // 2: titles on the arguments; confirm declares its type. 3: outputSchema
			Annotations:   tool.Annotations{Destructive: true, Idempotent: true},
		}, f.deleteMemory),
	}
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

func (f *Family) addMemory(ctx context.Context, call *tool.Call, args addArgs) (any, error) {
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
	return addResult{MemoryID: res.ID, Chunks: res.Chunks, Workspace: ws, Embedding: res.Embedding}, nil
}

func (f *Family) searchMemory(ctx context.Context, call *tool.Call, args searchArgs) (*searchResult, error) {
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
	mentions, err := f.mentions(ctx, res.Results)
	if err != nil {
		return nil, f.fail(call, err)
	}
	results := make([]foundJSON, len(res.Results))
	for i, r := range res.Results {
		ents := mentions[r.Memory.ID]
		if ents == nil {
			ents = []string{}
		}
		results[i] = foundJSON{MemoryID: r.Memory.ID, Score: r.Score, Snippet: r.Snippet, Text: r.Memory.Text,
			Chunks: r.Memory.Chunks, Metadata: metadataOf(r.Memory.Metadata), Entities: ents}
	}
	return &searchResult{Mode: res.Mode, Workspace: ws, Count: len(results), Results: results, Note: res.Note}, nil
}

func (f *Family) getStats(ctx context.Context, call *tool.Call, _ struct{}) (*statsResult, error) {
	st, err := f.mem.Stats(ctx)
	if err != nil {
		return nil, f.fail(call, err)
	}
	when := func(t time.Time) *string {
		if t.IsZero() {
			return nil
		}
		s := t.Format(time.RFC3339Nano)
		return &s
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	embedder := embedderJSON{State: st.Embedder.State, LastError: st.Embedder.LastError}
	if st.Embedder.Model != "" {
		embedder.embedderModel = &embedderModel{Model: st.Embedder.Model, PendingChunks: st.Store.Pending}
	}
	graph := graphState{State: "none"}
	if g, err := f.mem.Graph(ctx); err == nil {
		gs, err := g.GraphStats(ctx, "", 10)
		if err != nil {
			return nil, f.fail(call, err)
		}
		counts := countsOf(gs)
		graph = graphState{State: "ok", graphCounts: &counts}
	} else if !errors.Is(err, ErrNoGraph) {
		return nil, f.fail(call, err)
	}
	return &statsResult{
		Graph:          graph,
		Store:          "sqlite",
		Memories:       st.Store.Memories,
		Chunks:         st.Store.Chunks,
		Workspaces:     st.Store.Workspaces,
		StoreSizeBytes: st.Store.SizeBytes,
		AvgChunks:      st.AvgChunksPer,
		Oldest:         when(st.Store.Oldest),
		Newest:         when(st.Store.Newest),
		Embedder:       embedder,
		SearchLatency:  latencyJSON{Count: st.SearchCount, P50: ms(st.SearchP50), P99: ms(st.SearchP99)},
	}, nil
}

func (f *Family) deleteMemory(ctx context.Context, call *tool.Call, args deleteArgs) (any, error) {
	if !args.Confirm { // the schema says so already; a handler never trusts one line away
		return nil, tool.Errorf(tool.InvalidRequest, "confirm must be true")
	}
	if err := f.mem.Delete(ctx, args.MemoryID); err != nil {
		return nil, f.fail(call, err)
	}
	return deleteResult{Deleted: true, MemoryID: args.MemoryID}, nil
}

// mentions names the entities each found memory mentions; a store without
// a graph names none.
func (f *Family) mentions(ctx context.Context, found []Found) (map[string][]string, error) {
	g, err := f.mem.Graph(ctx)
	if errors.Is(err, ErrNoGraph) || len(found) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(found))
	for i, r := range found {
		ids[i] = r.Memory.ID
	}
	return g.Mentions(ctx, ids)
}

// fail maps the domain's errors to the tool contract. Store failures become the
// JSON-RPC -32000 error; what went wrong (paths included) goes to the log only.
func (f *Family) fail(call *tool.Call, err error) error {
	switch {
	case errors.Is(err, store.ErrUnavailable):
		f.log.Error("memory: store unavailable", zap.String("tool", call.Tool), zap.Error(err))
		return tool.StoreUnavailable(f.engine)
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
