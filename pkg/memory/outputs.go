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
	mentionsOut = `{"type":"array","description":"The entities most memories mention.","items":{"type":"object","required":["name","workspace_id","memories"],
		"properties":{"name":{"type":"string","description":"The entity."},"workspace_id":{"type":"string","description":"Its workspace."},"memories":{"type":"integer","description":"How many memories mention it."}}}}`
	nullableWorkspace = `{"anyOf":[{"type":"string"},{"type":"null"}],"description":"The workspace, or null for all."}`
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

var searchMemoryOut = tool.Output(
	tool.Prop("mode", `{"type":"string","description":"How the search ranked: lexical, semantic or hybrid."}`).Required(),
	workspaceOut,
	tool.Prop("count", `{"type":"integer","minimum":0,"description":"How many results."}`).Required(),
	tool.Prop("results", `{"type":"array","description":"The memories found, best first.","items":{"type":"object",
		"required":["memory_id","score","snippet","text","chunks","metadata","entities"],"properties":{
		"memory_id":{"type":"string","description":"The memory's id."},
		"score":{"type":"number","description":"Its score; higher is better."},
		"snippet":{"type":"string","description":"The best matching passage."},
		"text":{"type":"string","description":"The whole memory."},
		"chunks":{"type":"integer","description":"Its chunk count."},
		"metadata":{"type":"object","required":["source","tags","timestamp"],"description":"Where it came from.","properties":{
			"source":{"type":"string","description":"Its source."},"tags":{"type":"array","items":{"type":"string"},"description":"Its tags."},
			"timestamp":{"type":"string","description":"When, RFC 3339."}}},
		"entities":{"type":"array","items":{"type":"string"},"description":"The graph entities it mentions."}}}}`).Required(),
	tool.Prop("note", `{"type":"string","description":"Why the mode differs from the one asked for."}`))

var getStatsOut = tool.Output(
	tool.Prop("graph", `{"type":"object","required":["state"],"description":"The memory graph's counts.","properties":{
		"state":{"type":"string","enum":["ok","none"],"description":"none: this store has no graph."},
		"entities":{"type":"integer","description":"Entities."},"relations":{"type":"integer","description":"Relations."},
		"observations":{"type":"integer","description":"Observations."},"links":{"type":"integer","description":"Memory-entity links."},
		"memories_extracted":{"type":"integer","description":"Memories built into the graph."},"memories_pending":{"type":"integer","description":"Memories not yet built."},
		"most_mentioned":`+mentionsOut+`}}`).Required(),
	tool.Prop("store", `{"type":"string","description":"The store's engine."}`).Required(),
	tool.Prop("memories", `{"type":"integer","description":"Memories stored."}`).Required(),
	tool.Prop("chunks", `{"type":"integer","description":"Chunks stored."}`).Required(),
	tool.Prop("workspaces", `{"type":"integer","description":"Workspaces holding memories."}`).Required(),
	tool.Prop("store_size_bytes", `{"type":"integer","description":"The store's size on disk."}`).Required(),
	tool.Prop("avg_chunks_per_memory", `{"type":"number","description":"Chunks per memory, on average."}`).Required(),
	tool.Prop("oldest_memory", `{"anyOf":[{"type":"string"},{"type":"null"}],"description":"When the oldest memory was written, RFC 3339; null when none."}`).Required(),
	tool.Prop("newest_memory", `{"anyOf":[{"type":"string"},{"type":"null"}],"description":"When the newest memory was written, RFC 3339; null when none."}`).Required(),
	tool.Prop("embedder", `{"type":"object","required":["state"],"description":"The embedding service.","properties":{
		"state":{"type":"string","description":"Its state."},"model":{"type":"string","description":"Its model."},
		"pending_chunks":{"type":"integer","description":"Chunks waiting for vectors."},"last_error":{"type":"string","description":"Its last error."}}}`).Required(),
	tool.Prop("search_latency_ms", `{"type":"object","required":["count","p50","p99"],"description":"Search latency since start.","properties":{
		"count":{"type":"integer","description":"Searches."},"p50":{"type":"number","description":"Median, ms."},"p99":{"type":"number","description":"99th percentile, ms."}}}`).Required())

var deleteMemoryOut = tool.Output(
	tool.Prop("deleted", `{"type":"boolean","const":true,"description":"Always true: the memory is gone."}`).Required(),
	tool.Prop("memory_id", `{"type":"string","description":"The memory deleted."}`).Required())

var (
	createEntitiesOut  = tool.Output(tool.Prop("entities", `{"type":"array","description":"The entities created (those that existed are left out).","items":`+entityOut+`}`).Required())
	createRelationsOut = tool.Output(tool.Prop("relations", `{"type":"array","description":"The relations created (those that existed are left out).","items":`+relationOut+`}`).Required())
	addObservationsOut = tool.Output(tool.Prop("results", `{"type":"array","description":"Per entity, the observations that were new.","items":{"type":"object",
		"required":["entityName","addedObservations"],"properties":{"entityName":{"type":"string","description":"The entity."},
		"addedObservations":{"type":"array","items":{"type":"string"},"description":"What was added."}}}}`).Required())
	readGraphOut = tool.Output(entitiesOut, relationsOut,
		tool.Prop("nextCursor", `{"type":"string","description":"Where the next page starts; absent on the last page."}`))
	searchNodesOut = tool.Output(tool.Prop("entities", `{"type":"array","description":"The entities found, best first.","items":{"type":"object",
		"required":["name","entityType","observations","score"],"properties":{"name":{"type":"string","description":"The entity's name."},
		"entityType":{"type":"string","description":"Its type."},"observations":{"type":"array","items":{"type":"string"},"description":"What is known of it."},
		"score":{"type":"number","description":"Its score; higher is better."}}}}`).Required(), relationsOut)
	openNodesOut  = tool.Output(entitiesOut, relationsOut)
	buildGraphOut = tool.Output(
		tool.Prop("status", `{"type":"string","description":"How the build ended."}`).Required(),
		tool.Prop("extractor", `{"type":"string","description":"The extractor used."}`).Required(),
		tool.Prop("memories", `{"type":"integer","description":"Memories extracted."}`).Required(),
		tool.Prop("entities_created", `{"type":"integer","description":"Entities created."}`).Required(),
		tool.Prop("relations_created", `{"type":"integer","description":"Relations created."}`).Required(),
		tool.Prop("links", `{"type":"integer","description":"Memory-entity links made."}`).Required(),
		tool.Prop("pending", `{"type":"integer","description":"Memories still to build."}`).Required(),
		tool.Prop("workspace_id", nullableWorkspace).Required(),
		tool.Prop("duration_ms", `{"type":"integer","description":"How long it took."}`).Required(),
		tool.Prop("warning", `{"type":"string","description":"llm_fallback when the LLM was unavailable."}`),
		tool.Prop("message", `{"type":"string","description":"What the warning means."}`))
	getRelatedOut = tool.Output(workspaceOut,
		tool.Prop("entity", `{"anyOf":[{"type":"object"},{"type":"null"}],"description":"The entity asked about, with the memories that mention it; null when the name is a relation's only."}`).Required(),
		tool.Prop("related", `{"type":"array","description":"The related entities, nearest and best first.","items":{"type":"object",
			"required":["name","exists","depth","score","via","memories"],"properties":{"name":{"type":"string","description":"The entity."},
			"exists":{"type":"boolean","description":"Whether it is an entity or only named by a relation."},
			"depth":{"type":"integer","description":"Hops from the entity asked about."},"score":{"type":"number","description":"Its score."},
			"via":`+relationOut+`,"memories":{"type":"array","items":{"type":"object"},"description":"The memories that mention it."}}}}`).Required(),
		tool.Prop("count", `{"type":"integer","description":"How many related entities."}`).Required())
	graphStatusOut = tool.Output(
		tool.Prop("workspace_id", nullableWorkspace).Required(),
		tool.Prop("entities", `{"type":"integer","description":"Entities."}`).Required(),
		tool.Prop("relations", `{"type":"integer","description":"Relations."}`).Required(),
		tool.Prop("observations", `{"type":"integer","description":"Observations."}`).Required(),
		tool.Prop("links", `{"type":"integer","description":"Memory-entity links."}`).Required(),
		tool.Prop("memories_extracted", `{"type":"integer","description":"Memories built into the graph."}`).Required(),
		tool.Prop("memories_pending", `{"type":"integer","description":"Memories not yet built."}`).Required(),
		tool.Prop("building", `{"type":"boolean","description":"Whether a build is running."}`).Required(),
		tool.Prop("last_build", `{"anyOf":[{"type":"object"},{"type":"null"}],"description":"The last build's record; null before the first."}`).Required(),
		tool.Prop("most_mentioned", mentionsOut).Required(),
		tool.Prop("extractors", `{"type":"object","required":["default","llm"],"description":"The extractors.","properties":{
			"default":{"type":"string","description":"The one used when none is named."},"llm":{"type":"string","description":"The LLM extractor's state."}}}`).Required())
	importGraphOut = tool.Output(workspaceOut,
		tool.Prop("entities_read", `{"type":"integer","description":"Entities in the file."}`).Required(),
		tool.Prop("relations_read", `{"type":"integer","description":"Relations in the file."}`).Required(),
		tool.Prop("entities_created", `{"type":"integer","description":"Entities that were new."}`).Required(),
		tool.Prop("observations_added", `{"type":"integer","description":"Observations that were new."}`).Required(),
		tool.Prop("relations_created", `{"type":"integer","description":"Relations that were new."}`).Required())
)

// The result types of the memory tools whose results are plain records
// (the others still build maps); their output schemas above say the same.
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
