package store

import (
	"context"
	"errors"
	"slices"
	"time"
)

// The memory graph: entities (a unique name per workspace, a type, a set of
// observations), relations between entity names (a unique triple per
// workspace), and the links between memories and the entities they mention.
// An engine that keeps a graph implements [Graph] beside [Store]; the
// contract every engine must pass is storetest.RunGraph.
//
// Semantics follow the official MCP memory server where a client can see
// them (docs/decisions/0018-memory-graph.md): creating an entity or relation
// that exists is ignored, not an error; a relation may name entities that do
// not exist (yet); deleting an entity removes every relation naming it and
// its links to memories; deleting a memory removes its links. An item
// repeated within one call counts once, the first occurrence winning.

// The longest names, types and observations every engine takes, in
// characters. The graph tools' schemas and the importer hold to them.
const (
	MaxNameLen        = 1000   // an entity's name, a relation's from and to
	MaxTypeLen        = 200    // an entity's type, a relation's type
	MaxObservationLen = 100000 // one observation, as long as a memory
)

var (
	// ErrBadCursor: a read_graph cursor that this engine did not hand out,
	// or that belongs to another workspace.
	ErrBadCursor = errors.New("invalid cursor")
)

// MissingEntityError is AddObservations' refusal: an entity it names does
// not exist. Nothing of the call is written.
type MissingEntityError struct{ Name string }

// Error is the official server's wording, which clients may match.
func (e *MissingEntityError) Error() string { return "Entity with name " + e.Name + " not found" }

// Entity is a node of the graph. Observations are kept in the order they were
// added, each once.
type Entity struct {
	Name         string
	Type         string
	Observations []string
}

// Relation is a directed, typed edge between two entity names.
type Relation struct {
	From, To, Type string
}

// ObservationAdd adds Contents to the observations of the entity named Entity.
type ObservationAdd struct {
	Entity   string
	Contents []string
}

// ObservationsAdded reports one ObservationAdd: the contents that were new,
// in the order given.
type ObservationsAdded struct {
	Entity string
	Added  []string
}

// ObservationDelete removes Observations from the entity named Entity.
type ObservationDelete struct {
	Entity       string
	Observations []string
}

// Subgraph is a set of entities and the relations that touch them.
type Subgraph struct {
	Entities  []Entity
	Relations []Relation
}

// GraphPage is one page of a workspace's whole graph: entities in the order
// they were created, then relations in the order they were created. Next is
// the cursor of the following page, "" after the last.
type GraphPage struct {
	Subgraph
	Next string
}

// ScoredEntity is a search_nodes hit.
type ScoredEntity struct {
	Entity
	Score float64
}

// SearchResult is a ranked search over entities and the relations touching
// any entity found.
type SearchResult struct {
	Entities  []ScoredEntity
	Relations []Relation
}

// Direction says which relations a walk follows from an entity.
type Direction string

// The walk directions.
const (
	Outgoing Direction = "out"  // from the entity to others
	Incoming Direction = "in"   // from others to the entity
	Both     Direction = "both" // either
)

// RelatedQuery is a walk from one entity.
type RelatedQuery struct {
	Workspace string
	Name      string
	Depth     int      // 1..3
	Types     []string // relation types to follow; none: all
	Direction Direction
	Limit     int
}

// Related is an entity reached by a walk.
type Related struct {
	Entity
	Exists bool // false: only a relation names it
	Depth  int
	Score  float64
	// Via is the relation by which the walk first reached it.
	Via Relation
}

// ImportResult counts what an Import changed.
type ImportResult struct {
	EntitiesCreated   int
	ObservationsAdded int
	RelationsCreated  int
}

// Extraction is what an extractor found in one memory: the entities it
// mentions and the relations between them. Applying it creates the missing
// entities and relations, links the memory to every entity, and marks the
// memory extracted by Extractor, all in one durable step.
type Extraction struct {
	MemoryID  string
	Entities  []Entity // observations, if any, are added as for Import
	Relations []Relation
	Extractor string
}

// ExtractScope selects memories for a graph build.
type ExtractScope struct {
	Workspace string    // "": every workspace
	Since     time.Time // zero: any time; else Metadata.Time >= Since
}

// BuildRecord is one build_graph run.
type BuildRecord struct {
	Scope            ExtractScope
	Extractor        string
	Started          time.Time
	Finished         time.Time
	Status           string // completed, cancelled, failed
	Memories         int64  // memories extracted
	EntitiesCreated  int64
	RelationsCreated int64
	Links            int64
}

// Mention is an entity a memory mentions.
type Mention struct {
	Workspace string
	Name      string
	Memories  int64 // how many memories mention it
}

// PreviewLen is the most characters of a memory's text a MemoryRef carries.
const PreviewLen = 300

// MemoryRef is a memory that mentions an entity.
type MemoryRef struct {
	ID   string
	Text string // the text's first PreviewLen characters
	Time time.Time
}

// GraphStats summarizes a workspace's graph ("" for every workspace).
type GraphStats struct {
	Entities, Relations, Observations, Links int64
	// Extracted and Pending count the scope's memories a build has and has
	// not extracted.
	Extracted, Pending int64
	LastBuild          *BuildRecord
	MostMentioned      []Mention
}

// Graph keeps the memory graph. Implementations are safe for concurrent use;
// a write that returned without error is durable, and every read after it
// sees it. Workspaces are separate graphs.
type Graph interface {
	// CreateEntities creates the entities whose name is new in the workspace
	// and returns them as stored.
	CreateEntities(ctx context.Context, ws string, es []Entity) ([]Entity, error)
	// CreateRelations creates the relations that are new and returns them.
	CreateRelations(ctx context.Context, ws string, rs []Relation) ([]Relation, error)
	// AddObservations adds the new contents to existing entities, or fails
	// whole with a *MissingEntityError.
	AddObservations(ctx context.Context, ws string, adds []ObservationAdd) ([]ObservationsAdded, error)
	// DeleteEntities removes the named entities, every relation naming them
	// (whether or not the entity existed) and their links. Unknown names are
	// ignored.
	DeleteEntities(ctx context.Context, ws string, names []string) error
	// DeleteObservations removes observations; unknown entities and
	// observations are ignored.
	DeleteObservations(ctx context.Context, ws string, dels []ObservationDelete) error
	// DeleteRelations removes the given triples; unknown ones are ignored.
	DeleteRelations(ctx context.Context, ws string, rs []Relation) error
	// Import merges g in one durable step: entities created (or, existing,
	// given their missing observations), relations created. All or nothing.
	Import(ctx context.Context, ws string, g Subgraph) (ImportResult, error)

	// ReadGraph returns up to limit items (entities, then relations) after
	// cursor ("" for the start).
	ReadGraph(ctx context.Context, ws, cursor string, limit int) (GraphPage, error)
	// SearchNodes ranks the entities matching query: every entity whose
	// name, type or an observation contains query (case-insensitively, as
	// the official server matches), first, and the entities BM25 scores
	// above zero for query's words. limit <= 0: every substring match and
	// the 20 best of the others; else the limit best of both.
	SearchNodes(ctx context.Context, ws, query string, limit int) (SearchResult, error)
	// OpenNodes returns the named entities that exist and every relation
	// touching one of them.
	OpenNodes(ctx context.Context, ws string, names []string) (Subgraph, error)
	// Related walks from an entity (or a name only relations use); a name
	// nothing uses is ErrNotFound.
	Related(ctx context.Context, q RelatedQuery) ([]Related, error)

	// PendingExtraction lists up to limit memories of scope not extracted
	// yet, oldest first.
	PendingExtraction(ctx context.Context, scope ExtractScope, limit int) ([]Memory, error)
	// CountPending counts the memories of scope not extracted yet.
	CountPending(ctx context.Context, scope ExtractScope) (int64, error)
	// ForgetExtraction marks every memory of scope as not extracted (a
	// rebuild); what was extracted stays.
	ForgetExtraction(ctx context.Context, scope ExtractScope) error
	// ApplyExtractions applies each extraction (a memory deleted meanwhile is
	// skipped), all in one durable step, and counts what they created.
	ApplyExtractions(ctx context.Context, xs []Extraction) (BuildRecord, error)
	// RecordBuild keeps b as the latest build.
	RecordBuild(ctx context.Context, b BuildRecord) error
	// Mentions returns, for each memory id, the names of the entities it
	// mentions, sorted.
	Mentions(ctx context.Context, memoryIDs []string) (map[string][]string, error)
	// MentionedIn returns, for each entity name of ws, up to limit memories
	// mentioning it, newest first.
	MentionedIn(ctx context.Context, ws string, names []string, limit int) (map[string][]MemoryRef, error)
	// GraphStats summarizes the graph of ws ("" for every workspace) with up
	// to top most-mentioned entities.
	GraphStats(ctx context.Context, ws string, top int) (GraphStats, error)
}

// UniqueEntities keeps the first entity of each name, each observation once.
// With merge, a repeated name's observations are added to the first's (an
// import); without, a repeated name is ignored, as an existing one is.
func UniqueEntities(es []Entity, merge bool) []Entity {
	seen := make(map[string]int, len(es))
	out := make([]Entity, 0, len(es))
	for _, e := range es {
		if i, ok := seen[e.Name]; ok {
			if merge {
				out[i].Observations = append(slices.Clip(out[i].Observations), e.Observations...)
			}
			continue
		}
		seen[e.Name] = len(out)
		out = append(out, e)
	}
	for i := range out {
		out[i].Observations = UniqueStrings(out[i].Observations)
	}
	return out
}

// UniqueStrings is ss with each string once, in first-seen order.
func UniqueStrings(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// UniqueRelations is rs with each triple once, in first-seen order:
// every engine stores a relation once however often a call names it.
func UniqueRelations(rs []Relation) []Relation {
	seen := make(map[Relation]bool, len(rs))
	out := make([]Relation, 0, len(rs))
	for _, r := range rs {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}
