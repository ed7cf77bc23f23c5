package memory

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hearth-mcp/hearth/pkg/memory/jsonl"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/safefile"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// The memory graph's tools. The first nine are the official MCP memory
// server's (@modelcontextprotocol/server-memory), with its names, argument
// shapes and results, so a prompt or an agent written for it works
// unchanged; docs/tools.md's "Moving from server-memory" lists where they differ.

// graphWorkspace is the workspace_id argument of the graph tools.
var graphWorkspace = tool.Prop("workspace_id", `{"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$", "title": "Workspace",
	"description": "Workspace whose graph this is (letters, digits, '.', '_', '-'); default \"default\". Each workspace is a graph of its own."}`)

var (
	nameSchema = fmt.Sprintf(`{"type": "string", "minLength": 1, "maxLength": %d, "title": "Name", "description": "The name of the entity"}`, store.MaxNameLen)
	typeSchema = fmt.Sprintf(`{"type": "string", "maxLength": %d, "title": "Entity type", "description": "The type of the entity"}`, store.MaxTypeLen)
	obsSchema  = fmt.Sprintf(`{"type": "array", "items": {"type": "string", "maxLength": %d}, "title": "Observations", "description": "An array of observation contents associated with the entity"}`, store.MaxObservationLen)
	relSchema  = fmt.Sprintf(`{"type": "object", "additionalProperties": false, "required": ["from", "to", "relationType"], "title": "Relation", "description": "A directed, typed relation between two entity names",
		"properties": {
			"from": {"type": "string", "minLength": 1, "maxLength": %[1]d, "title": "From", "description": "The name of the entity where the relation starts"},
			"to": {"type": "string", "minLength": 1, "maxLength": %[1]d, "title": "To", "description": "The name of the entity where the relation ends"},
			"relationType": {"type": "string", "minLength": 1, "maxLength": %[2]d, "title": "Relation type", "description": "The type of the relation"}
		}}`, store.MaxNameLen, store.MaxTypeLen)
)

var createEntitiesSchema = tool.Object(
	tool.Prop("entities", fmt.Sprintf(`{"type": "array", "title": "Entities", "description": "The entities to create; a name that exists (or repeats in the list) is ignored",
		"items": {"type": "object", "additionalProperties": false, "required": ["name", "entityType", "observations"], "title": "Entity", "description": "An entity",
			"properties": {"name": %s, "entityType": %s, "observations": %s}}}`, nameSchema, typeSchema, obsSchema)).Required(),
	graphWorkspace,
)

type createEntitiesArgs struct {
	Entities  []EntityJSON `json:"entities"`
	Workspace string       `json:"workspace_id,omitempty"`
}

var createRelationsSchema = tool.Object(
	tool.Prop("relations", `{"type": "array", "title": "Relations", "description": "The relations to create, in active voice; one that exists (or repeats in the list) is ignored. Its entities need not exist.", "items": `+relSchema+`}`).Required(),
	graphWorkspace,
)

type relationsArgs struct {
	Relations []RelationJSON `json:"relations"`
	Workspace string         `json:"workspace_id,omitempty"`
}

var addObservationsSchema = tool.Object(
	tool.Prop("observations", fmt.Sprintf(`{"type": "array", "title": "Observations", "description": "Observations to add, per entity; each entity must exist",
		"items": {"type": "object", "additionalProperties": false, "required": ["entityName", "contents"], "title": "Observations of one entity", "description": "Observations for one entity",
			"properties": {
				"entityName": {"type": "string", "minLength": 1, "maxLength": %d, "title": "Entity", "description": "The name of the entity to add the observations to"},
				"contents": {"type": "array", "items": {"type": "string", "maxLength": %d}, "title": "Contents", "description": "An array of observation contents to add"}
			}}}`, store.MaxNameLen, store.MaxObservationLen)).Required(),
	graphWorkspace,
)

type addObservationsArgs struct {
	Observations []struct {
		EntityName string   `json:"entityName"`
		Contents   []string `json:"contents"`
	} `json:"observations"`
	Workspace string `json:"workspace_id,omitempty"`
}

var deleteEntitiesSchema = tool.Object(
	tool.Prop("entityNames", fmt.Sprintf(`{"type": "array", "items": {"type": "string", "maxLength": %d}, "title": "Entity names", "description": "An array of entity names to delete"}`, store.MaxNameLen)).Required(),
	graphWorkspace,
)

type deleteEntitiesArgs struct {
	EntityNames []string `json:"entityNames"`
	Workspace   string   `json:"workspace_id,omitempty"`
}

var deleteObservationsSchema = tool.Object(
	tool.Prop("deletions", fmt.Sprintf(`{"type": "array", "title": "Deletions", "description": "Observations to delete, per entity",
		"items": {"type": "object", "additionalProperties": false, "required": ["entityName", "observations"], "title": "Deletion", "description": "Observations to delete from one entity",
			"properties": {
				"entityName": {"type": "string", "maxLength": %d, "title": "Entity", "description": "The name of the entity containing the observations"},
				"observations": {"type": "array", "items": {"type": "string", "maxLength": %d}, "title": "Observations", "description": "An array of observations to delete"}
			}}}`, store.MaxNameLen, store.MaxObservationLen)).Required(),
	graphWorkspace,
)

type deleteObservationsArgs struct {
	Deletions []struct {
		EntityName   string   `json:"entityName"`
		Observations []string `json:"observations"`
	} `json:"deletions"`
	Workspace string `json:"workspace_id,omitempty"`
}

var deleteRelationsSchema = tool.Object(
	tool.Prop("relations", `{"type": "array", "title": "Relations", "description": "An array of relations to delete", "items": `+relSchema+`}`).Required(),
	graphWorkspace,
)

// readGraphLimit is read_graph's default page: a graph of up to this many
// entities and relations reads in one call, as from the official server.
const readGraphLimit = 1000

var readGraphSchema = tool.Object(
	tool.Prop("cursor", `{"type": "string", "maxLength": 512, "title": "Cursor", "description": "nextCursor of the previous page; absent for the first page"}`),
	tool.Prop("limit", fmt.Sprintf(`{"type": "integer", "minimum": 1, "maximum": 10000, "default": %d, "title": "Limit",
		"description": "Most entities and relations in one page (default %d, at most 10000); a page also stops near 1 MiB"}`, readGraphLimit, readGraphLimit)),
	graphWorkspace,
)

type readGraphArgs struct {
	Cursor    string `json:"cursor,omitempty"`
	Limit     int    `json:"limit,omitempty"`
	Workspace string `json:"workspace_id,omitempty"`
}

var searchNodesSchema = tool.Object(
	tool.Prop("query", `{"type": "string", "maxLength": 1000, "title": "Query", "description": "The search query to match against entity names, types, and observation content"}`).Required(),
	tool.Prop("limit", `{"type": "integer", "minimum": 1, "maximum": 100000, "title": "Limit", "description": "Most entities to return, best first; default every entity holding the query and the 20 best holding only its words"}`),
	graphWorkspace,
)

type searchNodesArgs struct {
	Query     string `json:"query"`
	Limit     int    `json:"limit,omitempty"`
	Workspace string `json:"workspace_id,omitempty"`
}

var openNodesSchema = tool.Object(
	tool.Prop("names", fmt.Sprintf(`{"type": "array", "items": {"type": "string", "maxLength": %d}, "title": "Names", "description": "An array of entity names to retrieve"}`, store.MaxNameLen)).Required(),
	graphWorkspace,
)

type openNodesArgs struct {
	Names     []string `json:"names"`
	Workspace string   `json:"workspace_id,omitempty"`
}

// buildTimeout is build_graph's default time limit.
const buildTimeout = 10 * time.Minute

var buildGraphSchema = tool.Object(
	tool.Prop("workspace_id", `{"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$", "title": "Workspace",
		"description": "Extract only this workspace's memories (into its graph); default every workspace, each memory into its own workspace's graph."}`),
	tool.Prop("since", `{"type": "string", "maxLength": 64, "title": "Since",
		"description": "Extract only memories whose timestamp is at or after this: RFC 3339 or a date (from its start)."}`),
	tool.Prop("rebuild", `{"type": "boolean", "default": false, "title": "Rebuild",
		"description": "Extract again the memories a build already extracted (what they gave stays); default false: only new memories."}`),
	tool.Prop("extractor", `{"type": "string", "enum": ["rules", "llm"], "title": "Extractor",
		"description": "rules (deterministic, local) or llm (the clarification family's LLM provider, falling back to rules if it fails). Default: llm when a provider is configured, else rules."}`),
	tool.TimeoutMS(buildTimeout, time.Hour, "A build that runs out stops as if cancelled: what it extracted stays, the rest stays pending."),
)

type buildGraphArgs struct {
	Workspace string    `json:"workspace_id,omitempty"`
	Since     string    `json:"since,omitempty"`
	Rebuild   bool      `json:"rebuild,omitempty"`
	Extractor Extractor `json:"extractor,omitempty"`
	TimeoutMS int       `json:"timeout_ms,omitempty"`
}

var getRelatedSchema = tool.Object(
	tool.Prop("name", nameSchema).Required(),
	tool.Prop("depth", `{"type": "integer", "minimum": 1, "maximum": 3, "default": 2, "title": "Depth", "description": "How many relations away to walk (1 to 3, default 2)"}`),
	tool.Prop("relation_types", fmt.Sprintf(`{"type": "array", "maxItems": 32, "items": {"type": "string", "minLength": 1, "maxLength": %d}, "title": "Relation types", "description": "Follow only relations of these types; default every type"}`, store.MaxTypeLen)),
	tool.Prop("direction", `{"type": "string", "enum": ["out", "in", "both"], "default": "both", "title": "Direction", "description": "out: relations from the entity onward; in: relations towards it; both (default)"}`),
	tool.Limit(20, 100, "related entities"),
	tool.Prop("memories", `{"type": "integer", "minimum": 0, "maximum": 10, "default": 3, "title": "Memories per entity", "description": "Most memories mentioning each entity to include, newest first (default 3)"}`),
	graphWorkspace,
)

type getRelatedArgs struct {
	Name      string          `json:"name"`
	Depth     int             `json:"depth,omitempty"`
	Types     []string        `json:"relation_types,omitempty"`
	Direction store.Direction `json:"direction,omitempty"`
	Limit     int             `json:"limit,omitempty"`
	Memories  int             `json:"memories,omitempty"`
	Workspace string          `json:"workspace_id,omitempty"`
}

var graphStatusSchema = tool.Object(
	tool.Prop("workspace_id", `{"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$", "title": "Workspace",
		"description": "The workspace to report on; default every workspace."}`),
)

type graphStatusArgs struct {
	Workspace string `json:"workspace_id,omitempty"`
}

var importGraphSchema = tool.Object(
	tool.Prop("path", `{"type": "string", "minLength": 1, "maxLength": 4096, "title": "File",
		"description": "The official memory server's JSONL file (its MEMORY_FILE_PATH): absolute, or relative to the client's directory."}`).Required(),
	graphWorkspace,
)

type importGraphArgs struct {
	Path      string `json:"path"`
	Workspace string `json:"workspace_id,omitempty"`
}

var (
	readOnly    = tool.Annotations{ReadOnly: true, Idempotent: true}
	writes      = tool.Annotations{}
	destructive = tool.Annotations{Destructive: true, Idempotent: true}
)

// graphTools declares the graph's tools.
func (f *Family) graphTools() []tool.Tool {
	return []tool.Tool{
		tool.For(tool.Tool{Name: "create_entities", Title: "Create entities",
			Description: "Create multiple new entities in the knowledge graph. An entity whose name exists is ignored. Returns the entities created.",
			InputSchema: createEntitiesSchema, OutputSchema: createEntitiesOut, SchemaVersion: 2, Annotations: writes}, f.createEntities),
		tool.For(tool.Tool{Name: "create_relations", Title: "Create relations",
			Description: "Create multiple new relations between entities in the knowledge graph. Relations should be in active voice. A relation that exists is ignored. Returns the relations created.",
			InputSchema: createRelationsSchema, OutputSchema: createRelationsOut, SchemaVersion: 2, Annotations: writes}, f.createRelations),
		tool.For(tool.Tool{Name: "add_observations", Title: "Add observations",
			Description: "Add new observations to existing entities in the knowledge graph. Returns, per entity, the observations that were new. NOT_FOUND, and nothing added, when an entity does not exist.",
			InputSchema: addObservationsSchema, OutputSchema: addObservationsOut, SchemaVersion: 2, Annotations: writes}, f.addObservations),
		tool.For(tool.Tool{Name: "delete_entities", Title: "Delete entities",
			Description: "Delete multiple entities and their associated relations from the knowledge graph (and their links to memories). Unknown names are ignored.",
			InputSchema: deleteEntitiesSchema, OutputSchema: successOut, SchemaVersion: 2, Annotations: destructive}, f.deleteEntities),
		tool.For(tool.Tool{Name: "delete_observations", Title: "Delete observations",
			Description: "Delete specific observations from entities in the knowledge graph. Unknown entities and observations are ignored.",
			InputSchema: deleteObservationsSchema, OutputSchema: successOut, SchemaVersion: 2, Annotations: destructive}, f.deleteObservations),
		tool.For(tool.Tool{Name: "delete_relations", Title: "Delete relations",
			Description: "Delete multiple relations from the knowledge graph. Unknown relations are ignored.",
			InputSchema: deleteRelationsSchema, OutputSchema: successOut, SchemaVersion: 2, Annotations: destructive}, f.deleteRelations),
		tool.For(tool.Tool{Name: "read_graph", Title: "Read graph",
			Description: "Read the knowledge graph: entities in the order they were created, then relations. A large graph comes in pages: pass nextCursor back as cursor until there is none.",
			InputSchema: readGraphSchema, SchemaVersion: 2, Annotations: readOnly}, f.readGraph),
		tool.For(tool.Tool{Name: "search_nodes", Title: "Search nodes",
			Description: "Search for nodes in the knowledge graph based on a query, ranked best first (BM25 over names, types and observations). Every entity containing the query (case-insensitive) is found, and entities holding its words apart too. Returns the entities, with scores, and the relations touching them.",
			InputSchema: searchNodesSchema, SchemaVersion: 2, Annotations: readOnly}, f.searchNodes),
		tool.For(tool.Tool{Name: "open_nodes", Title: "Open nodes",
			Description: "Open specific nodes in the knowledge graph by their names: the entities that exist and every relation touching one of them.",
			InputSchema: openNodesSchema, OutputSchema: openNodesOut, SchemaVersion: 2, Annotations: readOnly}, f.openNodes),
		tool.For(tool.Tool{Name: "build_graph", Title: "Build graph from memories",
			Description: "Extract entities and relations from stored memories into the knowledge graph and link each memory to the entities it mentions: new memories only unless rebuild, optionally one workspace or memories since a time. Reports progress; cancelling keeps what was extracted (each memory whole) and leaves the rest pending.",
			InputSchema: buildGraphSchema, SchemaVersion: 2, Annotations: tool.Annotations{Idempotent: true},
			Timeout: buildTimeout, TimeoutArg: "timeout_ms"}, f.buildGraph),
		tool.For(tool.Tool{Name: "get_related", Title: "Related entities",
			Description: "Walk the knowledge graph from an entity, up to 3 relations away, optionally only some relation types or one direction. Returns the entities reached, ranked (close and well-connected first), each with the relation that reached it and the memories that mention it.",
			InputSchema: getRelatedSchema, SchemaVersion: 3, // 3: outputSchema derived from the result (entity and related say what they hold)
			Annotations: readOnly}, f.getRelated),
		tool.For(tool.Tool{Name: "graph_status", Title: "Graph status",
			Description: "Counts of the knowledge graph (entities, relations, observations, links to memories), the memories extracted and pending, the last build, the most-mentioned entities and which extractors are available.",
			InputSchema: graphStatusSchema, SchemaVersion: 3, // 3: outputSchema derived from the result (last_build says what it holds)
			Annotations: readOnly}, f.graphStatus),
		tool.For(tool.Tool{Name: "import_graph", Title: "Import graph",
			Description: "Import the official memory server's JSONL file (MEMORY_FILE_PATH) into the knowledge graph, all or nothing: new entities and relations created, missing observations added, the rest left as it is, so importing twice changes nothing. A bad line is refused naming its number.",
			InputSchema: importGraphSchema, OutputSchema: importGraphOut, SchemaVersion: 2, Annotations: tool.Annotations{Idempotent: true},
			Timeout: 5 * time.Minute}, f.importGraph),
	}
}

// EntityJSON and RelationJSON are the official memory server's shapes of
// an entity and a relation, in the graph tools' arguments and results (and
// so what `hearthd memory export` reads back).
type EntityJSON struct {
	Name         string   `json:"name" jsonschema:"The entity's name."`
	EntityType   string   `json:"entityType" jsonschema:"Its type."`
	Observations []string `json:"observations" jsonschema:"What is known of it."`
}

type RelationJSON struct {
	From         string `json:"from" jsonschema:"The entity the relation starts at."`
	To           string `json:"to" jsonschema:"The entity it points to."`
	RelationType string `json:"relationType" jsonschema:"The relation, in active voice."`
}

// Store is e as the store keeps it.
func (e EntityJSON) Store() store.Entity {
	return store.Entity{Name: e.Name, Type: e.EntityType, Observations: e.Observations}
}

// Store is r as the store keeps it.
func (r RelationJSON) Store() store.Relation {
	return store.Relation{From: r.From, To: r.To, Type: r.RelationType}
}

func entitiesJSON(es []store.Entity) []EntityJSON {
	out := make([]EntityJSON, len(es))
	for i, e := range es {
		out[i] = toEntityJSON(e)
	}
	return out
}

func toEntityJSON(e store.Entity) EntityJSON {
	obs := e.Observations
	if obs == nil {
		obs = []string{}
	}
	return EntityJSON{Name: e.Name, EntityType: e.Type, Observations: obs}
}

func relationsJSON(rs []store.Relation) []RelationJSON {
	out := make([]RelationJSON, len(rs))
	for i, r := range rs {
		out[i] = RelationJSON{From: r.From, To: r.To, RelationType: r.Type}
	}
	return out
}

func relationsOf(args []RelationJSON) []store.Relation {
	out := make([]store.Relation, len(args))
	for i, r := range args {
		out[i] = r.Store()
	}
	return out
}

// graphFail maps the graph's errors to the tool contract.
func (f *Family) graphFail(call *tool.Call, err error) error {
	var missing *store.MissingEntityError
	switch {
	case errors.As(err, &missing):
		return &tool.Error{Code: tool.NotFound, Message: missing.Error(), Fields: map[string]any{"entity": missing.Name}}
	case errors.Is(err, store.ErrBadCursor):
		return tool.Errorf(tool.InvalidRequest, "cursor is not one read_graph gave for this workspace")
	case errors.Is(err, ErrNoGraph), errors.Is(err, ErrNoLLM):
		return tool.Errorf(tool.CapabilityMissing, "%v", err)
	}
	return f.fail(call, err)
}

func (f *Family) createEntities(ctx context.Context, call *tool.Call, args createEntitiesArgs) (any, error) {
	g, err := f.mem.Graph(ctx)
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	es := make([]store.Entity, len(args.Entities))
	for i, e := range args.Entities {
		es[i] = e.Store()
	}
	created, err := g.CreateEntities(ctx, workspaceOr(args.Workspace), es)
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	return createdEntities{Entities: entitiesJSON(created)}, nil
}

func (f *Family) createRelations(ctx context.Context, call *tool.Call, args relationsArgs) (any, error) {
	g, err := f.mem.Graph(ctx)
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	created, err := g.CreateRelations(ctx, workspaceOr(args.Workspace), relationsOf(args.Relations))
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	return createdRelations{Relations: relationsJSON(created)}, nil
}

func (f *Family) addObservations(ctx context.Context, call *tool.Call, args addObservationsArgs) (any, error) {
	g, err := f.mem.Graph(ctx)
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	adds := make([]store.ObservationAdd, len(args.Observations))
	for i, o := range args.Observations {
		adds[i] = store.ObservationAdd{Entity: o.EntityName, Contents: o.Contents}
	}
	res, err := g.AddObservations(ctx, workspaceOr(args.Workspace), adds)
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	type result struct {
		EntityName        string   `json:"entityName"`
		AddedObservations []string `json:"addedObservations"`
	}
	out := make([]result, len(res))
	for i, r := range res {
		out[i] = result{r.Entity, r.Added}
	}
	return map[string]any{"results": out}, nil
}

func (f *Family) deleteEntities(ctx context.Context, call *tool.Call, args deleteEntitiesArgs) (any, error) {
	g, err := f.mem.Graph(ctx)
	if err == nil {
		err = g.DeleteEntities(ctx, workspaceOr(args.Workspace), args.EntityNames)
	}
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	return deleted("Entities deleted successfully"), nil
}

func (f *Family) deleteObservations(ctx context.Context, call *tool.Call, args deleteObservationsArgs) (any, error) {
	g, err := f.mem.Graph(ctx)
	if err == nil {
		dels := make([]store.ObservationDelete, len(args.Deletions))
		for i, d := range args.Deletions {
			dels[i] = store.ObservationDelete{Entity: d.EntityName, Observations: d.Observations}
		}
		err = g.DeleteObservations(ctx, workspaceOr(args.Workspace), dels)
	}
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	return deleted("Observations deleted successfully"), nil
}

func (f *Family) deleteRelations(ctx context.Context, call *tool.Call, args relationsArgs) (any, error) {
	g, err := f.mem.Graph(ctx)
	if err == nil {
		err = g.DeleteRelations(ctx, workspaceOr(args.Workspace), relationsOf(args.Relations))
	}
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	return deleted("Relations deleted successfully"), nil
}

func (f *Family) readGraph(ctx context.Context, call *tool.Call, args readGraphArgs) (*readGraphResult, error) {
	g, err := f.mem.Graph(ctx)
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	page, err := g.ReadGraph(ctx, workspaceOr(args.Workspace), args.Cursor, args.Limit) // the binder filled in the default
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	return &readGraphResult{Entities: entitiesJSON(page.Entities), Relations: relationsJSON(page.Relations), NextCursor: page.Next}, nil
}

func (f *Family) searchNodes(ctx context.Context, call *tool.Call, args searchNodesArgs) (*searchNodesResult, error) {
	g, err := f.mem.Graph(ctx)
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	res, err := g.SearchNodes(ctx, workspaceOr(args.Workspace), args.Query, args.Limit)
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	es := make([]scoredEntity, len(res.Entities))
	for i, e := range res.Entities {
		es[i] = scoredEntity{toEntityJSON(e.Entity), e.Score}
	}
	return &searchNodesResult{Entities: es, Relations: relationsJSON(res.Relations)}, nil
}

func (f *Family) openNodes(ctx context.Context, call *tool.Call, args openNodesArgs) (any, error) {
	g, err := f.mem.Graph(ctx)
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	sg, err := g.OpenNodes(ctx, workspaceOr(args.Workspace), args.Names)
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	return subgraphResult{Entities: entitiesJSON(sg.Entities), Relations: relationsJSON(sg.Relations)}, nil
}

func (f *Family) buildGraph(ctx context.Context, call *tool.Call, args buildGraphArgs) (*buildResult, error) {
	in := BuildInput{Scope: store.ExtractScope{Workspace: args.Workspace}, Rebuild: args.Rebuild, Extractor: args.Extractor}
	if args.Since != "" {
		t, err := parseTime(args.Since, false)
		if err != nil {
			return nil, tool.Errorf(tool.InvalidRequest, "since: %v", err)
		}
		in.Scope.Since = t
	}
	res, err := f.mem.BuildGraph(ctx, in, func(done, total int64) {
		call.Progress(float64(done), float64(total), fmt.Sprintf("extracted %d of %d memories", done, total))
	})
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	r := res.Record
	out := &buildResult{Status: r.Status, Extractor: r.Extractor, Memories: r.Memories, EntitiesCreated: r.EntitiesCreated,
		RelationsCreated: r.RelationsCreated, Links: r.Links, Pending: res.Pending, Workspace: nullIfEmpty(args.Workspace),
		DurationMS: r.Finished.Sub(r.Started).Milliseconds()}
	if res.Fallback {
		out.Warning, out.Message = "llm_fallback", "LLM unavailable, using deterministic mode"
	}
	return out, nil
}

func (f *Family) getRelated(ctx context.Context, call *tool.Call, args getRelatedArgs) (*relatedResult, error) {
	g, err := f.mem.Graph(ctx)
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	ws := workspaceOr(args.Workspace)
	q := store.RelatedQuery{Workspace: ws, Name: args.Name, Depth: args.Depth, Types: args.Types, Direction: args.Direction, Limit: args.Limit}
	// depth, direction and memories default in the schema; the binder
	// filled them in.
	if q.Limit == 0 {
		q.Limit = 20
	}
	perEntity := args.Memories
	related, err := g.Related(ctx, q)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &tool.Error{Code: tool.NotFound, Message: "no entity or relation in this workspace has that name", Fields: map[string]any{"name": args.Name}}
	}
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	start, err := g.OpenNodes(ctx, ws, []string{args.Name})
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	mentioned := map[string][]store.MemoryRef{}
	if perEntity > 0 {
		names := []string{args.Name}
		for _, r := range related {
			if r.Exists {
				names = append(names, r.Name)
			}
		}
		if mentioned, err = g.MentionedIn(ctx, ws, names, perEntity); err != nil {
			return nil, f.graphFail(call, err)
		}
	}
	memories := func(name string) []mentioningJSON {
		out := []mentioningJSON{}
		for _, m := range mentioned[name] {
			out = append(out, mentioningJSON{m.ID, m.Text, m.Time.Format(time.RFC3339Nano)})
		}
		return out
	}
	out := make([]relatedJSON, len(related))
	for i, r := range related {
		out[i] = relatedJSON{toEntityJSON(r.Entity), r.Exists, r.Depth, r.Score,
			RelationJSON{r.Via.From, r.Via.To, r.Via.Type}, memories(r.Name)}
	}
	var entity *startEntity
	if len(start.Entities) == 1 {
		entity = &startEntity{toEntityJSON(start.Entities[0]), memories(args.Name)}
	}
	return &relatedResult{Workspace: ws, Entity: entity, Related: out, Count: len(out)}, nil
}

func (f *Family) graphStatus(ctx context.Context, call *tool.Call, args graphStatusArgs) (*graphStatusResult, error) {
	g, err := f.mem.Graph(ctx)
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	st, err := g.GraphStats(ctx, args.Workspace, 10)
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	var last *buildJSON
	if b := st.LastBuild; b != nil {
		var since *string
		if !b.Scope.Since.IsZero() {
			since = nullIfEmpty(b.Scope.Since.Format(time.RFC3339Nano))
		}
		last = &buildJSON{Status: b.Status, Extractor: b.Extractor, Workspace: nullIfEmpty(b.Scope.Workspace), Since: since,
			Started: b.Started.Format(time.RFC3339Nano), Finished: b.Finished.Format(time.RFC3339Nano),
			Memories: b.Memories, EntitiesCreated: b.EntitiesCreated, RelationsCreated: b.RelationsCreated, Links: b.Links}
	}
	return &graphStatusResult{Workspace: nullIfEmpty(args.Workspace), graphCounts: countsOf(st), Building: len(f.mem.building) > 0,
		LastBuild: last, Extractors: extractorsJSON{Default: f.mem.defaultExtractor(), LLM: f.mem.llmState()}}, nil
}

// countsOf is the graph's counts as get_stats and graph_status give them.
func countsOf(st store.GraphStats) graphCounts {
	return graphCounts{Entities: st.Entities, Relations: st.Relations, Observations: st.Observations, Links: st.Links,
		Extracted: st.Extracted, Pending: st.Pending, MostMentioned: mentionsJSON(st.MostMentioned)}
}

func mentionsJSON(ms []store.Mention) []mentionJSON {
	out := make([]mentionJSON, len(ms))
	for i, m := range ms {
		out[i] = mentionJSON{m.Name, m.Workspace, m.Memories}
	}
	return out
}

func (f *Family) importGraph(ctx context.Context, call *tool.Call, args importGraphArgs) (any, error) {
	path := args.Path
	if !filepath.IsAbs(path) {
		if call.Client.Cwd == "" {
			return nil, tool.Errorf(tool.InvalidRequest, "path is relative and the client's directory is unknown: pass an absolute path")
		}
		path = filepath.Join(call.Client.Cwd, path)
	}
	g, err := f.mem.Graph(ctx)
	if err != nil {
		return nil, f.graphFail(call, err)
	}
	res, read, err := ImportFile(ctx, g, workspaceOr(args.Workspace), path)
	var le *jsonl.LineError
	switch {
	case errors.As(err, &le):
		return nil, &tool.Error{Code: tool.InvalidRequest, Message: "nothing imported: " + le.Error(), Fields: map[string]any{"line": le.Line}}
	case errors.Is(err, errImportFile):
		return nil, tool.Errorf(tool.InvalidRequest, "%v", err)
	case err != nil:
		return nil, f.graphFail(call, err)
	}
	return importResult{Workspace: workspaceOr(args.Workspace), EntitiesRead: len(read.Entities), RelationsRead: len(read.Relations),
		EntitiesCreated: res.EntitiesCreated, ObservationsAdded: res.ObservationsAdded, RelationsCreated: res.RelationsCreated}, nil
}

// errImportFile marks a file that could not be opened or read.
var errImportFile = errors.New("cannot read the file")

// ImportFile reads the JSONL file at path (a regular file, opened as every
// file a client names) and imports it into ws in one durable step. It
// returns what was read and what changed; a bad line is a *jsonl.LineError
// and nothing is written.
func ImportFile(ctx context.Context, g store.Graph, ws, path string) (store.ImportResult, store.Subgraph, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return store.ImportResult{}, store.Subgraph{}, fmt.Errorf("%w: %w", errImportFile, err)
	}
	defer f.Close()
	read, err := jsonl.Read(f)
	if err != nil {
		var le *jsonl.LineError
		if !errors.As(err, &le) {
			err = fmt.Errorf("%w: %s: %w", errImportFile, path, err)
		}
		return store.ImportResult{}, store.Subgraph{}, err
	}
	res, err := g.Import(ctx, ws, read)
	return res, read, err
}

// defaultExtractor names the extractor a build uses without being told.
func (m *Memories) defaultExtractor() string {
	if m.chat != nil {
		return string(ExtractLLM)
	}
	return string(ExtractRules)
}
