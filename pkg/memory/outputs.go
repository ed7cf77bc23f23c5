package memory

import "github.com/hearth-mcp/hearth/pkg/tool"

// The memory tools' output schemas (tool.Tool.OutputSchema): what each
// result holds, as clients check structuredContent.

// Pieces several results share.
const (
	entityOut = `{"type":"object","required":["name","entityType","observations"],"properties":{
		"name":{"type":"string","description":"The entity's name."},
		"entityType":{"type":"string","description":"Its type."},
		"observations":{"type":"array","items":{"type":"string"},"description":"What is known of it."}}}`
	relationOut = `{"type":"object","required":["from","to","relationType"],"properties":{
		"from":{"type":"string","description":"The entity the relation starts at."},
		"to":{"type":"string","description":"The entity it points to."},
		"relationType":{"type":"string","description":"The relation, in active voice."}}}`
)

var (
	entitiesOut  = tool.Prop("entities", `{"type":"array","description":"The entities.","items":`+entityOut+`}`).Required()
	relationsOut = tool.Prop("relations", `{"type":"array","description":"The relations.","items":`+relationOut+`}`).Required()
	workspaceOut = tool.Prop("workspace_id", `{"type":"string","description":"The workspace."}`).Required()
	successOut   = tool.Output(tool.Prop("success", `{"type":"boolean","const":true,"description":"Always true: what was named is gone."}`).Required(),
		tool.Prop("message", `{"type":"string","description":"What was deleted."}`).Required())
)

var addMemoryOut = tool.Output(
	tool.Prop("memory_id", `{"type":"string","description":"The new memory's id."}`).Required(),
	tool.Prop("chunks", `{"type":"integer","minimum":1,"description":"How many chunks it was split into."}`).Required(),
	workspaceOut,
	tool.Prop("embedding", `{"type":"string","enum":["none","done","pending"],"description":"Whether its chunks have vectors yet."}`).Required())

var deleteMemoryOut = tool.Output(
	tool.Prop("deleted", `{"type":"boolean","const":true,"description":"Always true: the memory is gone."}`).Required(),
	tool.Prop("memory_id", `{"type":"string","description":"The memory deleted."}`).Required())

var (
	createEntitiesOut  = tool.Output(tool.Prop("entities", `{"type":"array","description":"The entities created (those that existed are left out).","items":`+entityOut+`}`).Required())
	createRelationsOut = tool.Output(tool.Prop("relations", `{"type":"array","description":"The relations created (those that existed are left out).","items":`+relationOut+`}`).Required())
	addObservationsOut = tool.Output(tool.Prop("results", `{"type":"array","description":"Per entity, the observations that were new.","items":{"type":"object",
		"required":["entityName","addedObservations"],"properties":{"entityName":{"type":"string","description":"The entity."},
		"addedObservations":{"type":"array","items":{"type":"string"},"description":"What was added."}}}}`).Required())
	openNodesOut   = tool.Output(entitiesOut, relationsOut)
	importGraphOut = tool.Output(workspaceOut,
		tool.Prop("entities_read", `{"type":"integer","description":"Entities in the file."}`).Required(),
		tool.Prop("relations_read", `{"type":"integer","description":"Relations in the file."}`).Required(),
		tool.Prop("entities_created", `{"type":"integer","description":"Entities that were new."}`).Required(),
		tool.Prop("observations_added", `{"type":"integer","description":"Observations that were new."}`).Required(),
		tool.Prop("relations_created", `{"type":"integer","description":"Relations that were new."}`).Required())
)

// The result types of the tools whose output schemas are written above (by
// hand, and saying the same).
type (
	addResult struct {
		MemoryID  string `json:"memory_id"`
		Chunks    int    `json:"chunks"`
		Workspace string `json:"workspace_id"`
		Embedding string `json:"embedding"`
	}
	deleteResult struct {
		Deleted  bool   `json:"deleted"`
		MemoryID string `json:"memory_id"`
	}
	createdEntities struct {
		Entities []EntityJSON `json:"entities"`
	}
	createdRelations struct {
		Relations []RelationJSON `json:"relations"`
	}
	subgraphResult struct {
		Entities  []EntityJSON   `json:"entities"`
		Relations []RelationJSON `json:"relations"`
	}
	successResult struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
	}
	importResult struct {
		Workspace         string `json:"workspace_id"`
		EntitiesRead      int    `json:"entities_read"`
		RelationsRead     int    `json:"relations_read"`
		EntitiesCreated   int    `json:"entities_created"`
		ObservationsAdded int    `json:"observations_added"`
		RelationsCreated  int    `json:"relations_created"`
	}
)

func deleted(what string) successResult { return successResult{Success: true, Message: what} }

// The result types of the tools whose output schemas are derived from them
// (tool.OutputOf: the jsonschema tag is a description).
type (
	searchResult struct {
		Mode      Mode        `json:"mode" jsonschema:"How the search ranked: lexical, semantic or hybrid."`
		Workspace string      `json:"workspace_id" jsonschema:"The workspace."`
		Count     int         `json:"count" minimum:"0" jsonschema:"How many results."`
		Results   []foundJSON `json:"results" jsonschema:"The memories found, best first."`
		Note      string      `json:"note,omitempty" jsonschema:"Why the mode differs from the one asked for."`
	}
	foundJSON struct {
		MemoryID string       `json:"memory_id" jsonschema:"The memory's id."`
		Score    float64      `json:"score" jsonschema:"Its score; higher is better."`
		Snippet  string       `json:"snippet" jsonschema:"The best matching passage."`
		Text     string       `json:"text" jsonschema:"The whole memory."`
		Chunks   int          `json:"chunks" jsonschema:"Its chunk count."`
		Metadata metadataJSON `json:"metadata" jsonschema:"Where it came from."`
		Entities []string     `json:"entities" jsonschema:"The graph entities it mentions."`
	}
	// metadataJSON is a memory's metadata as search_memory gives it.
	metadataJSON struct {
		Source    string   `json:"source" jsonschema:"Its source."`
		Tags      []string `json:"tags" jsonschema:"Its tags."`
		Timestamp string   `json:"timestamp" jsonschema:"When, RFC 3339."`
	}

	statsResult struct {
		Graph          graphState   `json:"graph" jsonschema:"The memory graph's counts."`
		Store          string       `json:"store" jsonschema:"The store's engine."`
		Memories       int64        `json:"memories" jsonschema:"Memories stored."`
		Chunks         int64        `json:"chunks" jsonschema:"Chunks stored."`
		Workspaces     int64        `json:"workspaces" jsonschema:"Workspaces holding memories."`
		StoreSizeBytes int64        `json:"store_size_bytes" jsonschema:"The store's size on disk."`
		AvgChunks      float64      `json:"avg_chunks_per_memory" jsonschema:"Chunks per memory, on average."`
		Oldest         *string      `json:"oldest_memory" jsonschema:"When the oldest memory was written, RFC 3339; null when none."`
		Newest         *string      `json:"newest_memory" jsonschema:"When the newest memory was written, RFC 3339; null when none."`
		Embedder       embedderJSON `json:"embedder" jsonschema:"The embedding service."`
		SearchLatency  latencyJSON  `json:"search_latency_ms" jsonschema:"Search latency since start."`
	}
	// graphState is get_stats' graph: its counts unless the store has none.
	graphState struct {
		State string `json:"state" enum:"ok,none" jsonschema:"none: this store has no graph."`
		*graphCounts
	}
	graphCounts struct {
		Entities      int64         `json:"entities" jsonschema:"Entities."`
		Relations     int64         `json:"relations" jsonschema:"Relations."`
		Observations  int64         `json:"observations" jsonschema:"Observations."`
		Links         int64         `json:"links" jsonschema:"Memory-entity links."`
		Extracted     int64         `json:"memories_extracted" jsonschema:"Memories built into the graph."`
		Pending       int64         `json:"memories_pending" jsonschema:"Memories not yet built."`
		MostMentioned []mentionJSON `json:"most_mentioned" jsonschema:"The entities most memories mention."`
	}
	embedderJSON struct {
		State string `json:"state" jsonschema:"Its state."`
		*embedderModel
		LastError string `json:"last_error,omitempty" jsonschema:"Its last error."`
	}
	embedderModel struct {
		Model         string `json:"model" jsonschema:"Its model."`
		PendingChunks int64  `json:"pending_chunks" jsonschema:"Chunks waiting for vectors."`
	}
	latencyJSON struct {
		Count uint64  `json:"count" jsonschema:"Searches."`
		P50   float64 `json:"p50" jsonschema:"Median, ms."`
		P99   float64 `json:"p99" jsonschema:"99th percentile, ms."`
	}

	readGraphResult struct {
		Entities   []EntityJSON   `json:"entities" jsonschema:"The entities."`
		Relations  []RelationJSON `json:"relations" jsonschema:"The relations."`
		NextCursor string         `json:"nextCursor,omitempty" jsonschema:"Where the next page starts; absent on the last page."`
	}
	searchNodesResult struct {
		Entities  []scoredEntity `json:"entities" jsonschema:"The entities found, best first."`
		Relations []RelationJSON `json:"relations" jsonschema:"The relations."`
	}
	scoredEntity struct {
		EntityJSON
		Score float64 `json:"score" jsonschema:"Its score; higher is better."`
	}

	buildResult struct {
		Status           string  `json:"status" jsonschema:"How the build ended."`
		Extractor        string  `json:"extractor" jsonschema:"The extractor used."`
		Memories         int64   `json:"memories" jsonschema:"Memories extracted."`
		EntitiesCreated  int64   `json:"entities_created" jsonschema:"Entities created."`
		RelationsCreated int64   `json:"relations_created" jsonschema:"Relations created."`
		Links            int64   `json:"links" jsonschema:"Memory-entity links made."`
		Pending          int64   `json:"pending" jsonschema:"Memories still to build."`
		Workspace        *string `json:"workspace_id" jsonschema:"The workspace, or null for all."`
		DurationMS       int64   `json:"duration_ms" jsonschema:"How long it took."`
		Warning          string  `json:"warning,omitempty" jsonschema:"llm_fallback when the LLM was unavailable."`
		Message          string  `json:"message,omitempty" jsonschema:"What the warning means."`
	}

	relatedResult struct {
		Workspace string        `json:"workspace_id" jsonschema:"The workspace."`
		Entity    *startEntity  `json:"entity" jsonschema:"The entity asked about, with the memories that mention it; null when the name is a relation's only."`
		Related   []relatedJSON `json:"related" jsonschema:"The related entities, nearest and best first."`
		Count     int           `json:"count" jsonschema:"How many related entities."`
	}
	startEntity struct {
		EntityJSON
		Memories []mentioningJSON `json:"memories" jsonschema:"The memories that mention it."`
	}
	relatedJSON struct {
		EntityJSON
		Exists   bool             `json:"exists" jsonschema:"Whether it is an entity or only named by a relation."`
		Depth    int              `json:"depth" jsonschema:"Hops from the entity asked about."`
		Score    float64          `json:"score" jsonschema:"Its score."`
		Via      RelationJSON     `json:"via" jsonschema:"The relation that reached it."`
		Memories []mentioningJSON `json:"memories" jsonschema:"The memories that mention it."`
	}
	// mentioningJSON is a memory that mentions an entity.
	mentioningJSON struct {
		MemoryID  string `json:"memory_id" jsonschema:"The memory's id."`
		Text      string `json:"text" jsonschema:"Its text."`
		Timestamp string `json:"timestamp" jsonschema:"When it was written, RFC 3339."`
	}

	graphStatusResult struct {
		Workspace *string `json:"workspace_id" jsonschema:"The workspace, or null for all."`
		graphCounts
		Building   bool           `json:"building" jsonschema:"Whether a build is running."`
		LastBuild  *buildJSON     `json:"last_build" jsonschema:"The last build's record; null before the first."`
		Extractors extractorsJSON `json:"extractors" jsonschema:"The extractors."`
	}
	buildJSON struct {
		Status           string  `json:"status" jsonschema:"How it ended: completed, cancelled or failed."`
		Extractor        string  `json:"extractor" jsonschema:"The extractor used."`
		Workspace        *string `json:"workspace_id" jsonschema:"The workspace it built, or null for all."`
		Since            *string `json:"since" jsonschema:"The memories it took were written since then, RFC 3339; null for all."`
		Started          string  `json:"started" jsonschema:"When it started, RFC 3339."`
		Finished         string  `json:"finished" jsonschema:"When it finished, RFC 3339."`
		Memories         int64   `json:"memories" jsonschema:"Memories extracted."`
		EntitiesCreated  int64   `json:"entities_created" jsonschema:"Entities created."`
		RelationsCreated int64   `json:"relations_created" jsonschema:"Relations created."`
		Links            int64   `json:"links" jsonschema:"Memory-entity links made."`
	}
	extractorsJSON struct {
		Default string `json:"default" jsonschema:"The one used when none is named."`
		LLM     string `json:"llm" jsonschema:"The LLM extractor's state."`
	}
	mentionJSON struct {
		Name      string `json:"name" jsonschema:"The entity."`
		Workspace string `json:"workspace_id" jsonschema:"Its workspace."`
		Memories  int64  `json:"memories" jsonschema:"How many memories mention it."`
	}
)

// nullIfEmpty is s, or nil (JSON null) when it is empty.
func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
