// Package store is the seam between the memory family and the engines that keep
// memories: the [Store] interface, the values that cross it, and its errors.
//
// An engine stores each memory whole plus the chunks the caller cut it into;
// chunks are what get ranked, memories are what get returned. Search takes one
// ranking at a time (lexical or vector): fusing rankings is the caller's job,
// so every engine ranks the same way, and every engine ranks lexically with
// the same code, package rank. The contract every engine must pass is the
// suite in package storetest. An engine may also keep the memory graph
// (Graph, graph.go), whose contract is storetest.RunGraph.
package store

import (
	"context"
	"errors"
	"time"
)

// DefaultWorkspace scopes memories whose caller named no workspace.
const DefaultWorkspace = "default"

var (
	// ErrNotFound: no memory has that id.
	ErrNotFound = errors.New("memory not found")
	// ErrUnavailable wraps every failure of the engine itself (cannot open,
	// corrupt, I/O error, closed), as opposed to a bad request. The family turns
	// it into the JSON-RPC -32000 "Database connection failed" error.
	ErrUnavailable = errors.New("memory store unavailable")
)

// Store keeps memories. Implementations are safe for concurrent use, and an Add
// that returned without error is durable: it survives the process being killed.
type Store interface {
	// Add stores a memory and its chunks (and their vectors when given) in one
	// durable step and returns its new id.
	Add(ctx context.Context, m NewMemory) (string, error)
	// Get returns one memory, or ErrNotFound.
	Get(ctx context.Context, id string) (Memory, error)
	// Delete removes a memory and its chunks, or returns ErrNotFound.
	Delete(ctx context.Context, id string) error
	// SearchLexical ranks the memories of q.Workspace that pass q.Filters by
	// BM25 over their chunks (the best chunk speaks for its memory). Terms are
	// matched as plain words: no query syntax of the engine is ever exposed.
	SearchLexical(ctx context.Context, q Query, terms []string) ([]Hit, error)
	// SearchVector ranks the same candidates by cosine similarity between vec
	// and the chunks embedded with model.
	SearchVector(ctx context.Context, q Query, vec []float32, model string) ([]Hit, error)
	// Pending lists up to limit chunks that have no vector yet, oldest first.
	Pending(ctx context.Context, limit int) ([]PendingChunk, error)
	// SetVectors records vectors computed by model for pending chunks. A chunk
	// deleted in the meantime is skipped.
	SetVectors(ctx context.Context, model string, vecs []ChunkVector) error
	// ForgetVectorsNotFrom marks every chunk embedded by a model other than
	// model as pending again (the embedding model changed), and reports how many.
	ForgetVectorsNotFrom(ctx context.Context, model string) (int64, error)
	// Stats summarizes the whole store (all workspaces).
	Stats(ctx context.Context) (Stats, error)
	// Close releases the engine. Calls after Close return ErrUnavailable.
	Close() error
}

// Metadata is what the caller says about a memory besides its text.
type Metadata struct {
	Source string
	Tags   []string
	// Time is when the memory happened (the caller's timestamp, else the time it
	// was added). Date filters and oldest/newest use it.
	Time time.Time
}

// NewMemory is a memory to add.
type NewMemory struct {
	Workspace string
	Text      string
	Metadata  Metadata
	// Chunks are the pieces of Text that are ranked; at least one.
	Chunks []string
	// Vectors, when not nil, holds one vector per chunk computed by Model.
	Vectors [][]float32
	Model   string
}

// Memory is a stored memory, returned whole.
type Memory struct {
	ID        string
	Workspace string
	Text      string
	Metadata  Metadata
	Chunks    int
}

// Filters narrow a search. Zero values filter nothing.
type Filters struct {
	// Tags: a memory must carry every one of them.
	Tags []string
	// Source must equal the memory's source exactly.
	Source string
	// From and To bound Metadata.Time, both inclusive.
	From, To time.Time
}

// Query is what every ranking shares.
type Query struct {
	Workspace string
	Filters   Filters
	Limit     int
}

// Hit is one ranked memory. Score is larger for better matches: -bm25 for
// lexical, cosine similarity for vector.
type Hit struct {
	Memory Memory
	Score  float64
	// Chunk is the text of the memory's best-ranked chunk.
	Chunk string
}

// PendingChunk is a chunk waiting for its vector.
type PendingChunk struct {
	ID   int64
	Text string
}

// ChunkVector is a vector for a pending chunk.
type ChunkVector struct {
	ChunkID int64
	Vector  []float32
}

// Stats summarizes a store.
type Stats struct {
	Memories   int64
	Chunks     int64
	Workspaces int64
	// Pending is how many chunks wait for a vector.
	Pending   int64
	SizeBytes int64
	// Oldest and Newest are the extreme Metadata.Time values (zero when empty).
	Oldest, Newest time.Time
}
