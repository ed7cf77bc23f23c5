package tool

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// DefaultTimeout bounds a call whose tool declares no timeout of its own.
const DefaultTimeout = 60 * time.Second

// Tool is one tool's definition and handler.
type Tool struct {
	// Name is the stable identifier clients call (letters, digits, '_' and '-').
	Name string
	// Title is a short human-readable name (optional).
	Title string
	// Description says what the tool does, for the model and the user.
	Description string
	// InputSchema is a Draft 2020-12 JSON Schema with "type":"object" and
	// "additionalProperties":false; every property has a description. It must be
	// self-contained: no $ref outside the document.
	InputSchema json.RawMessage
	// OutputSchema is a Draft 2020-12 JSON Schema of the result object, with
	// "type":"object": tools/list publishes it as outputSchema and MCP clients
	// validate structuredContent against it. Every tool declares one; the
	// snapshot pins it with the input schema.
	OutputSchema json.RawMessage
	// SchemaVersion is the tool's monotonic contract version: bump it when
	// argument names or meanings, defaults, result shape, error codes or
	// cancellation/timeout semantics change. The snapshot test
	// (daemon/snapshot_test.go) pins it.
	SchemaVersion int
	// Annotations are the MCP behaviour hints.
	Annotations Annotations
	// Timeout is the default time limit of one call; zero means DefaultTimeout.
	Timeout time.Duration
	// TimeoutArg names an integer argument (milliseconds) that overrides Timeout
	// for one call, when the tool's schema declares it. Empty: not overridable.
	TimeoutArg string
	// ArgMessages replaces the validator's wording for specific argument
	// violations, where existing clients expect a fixed message. The key is the
	// argument's JSON Pointer and the failing keyword, joined by a space:
	// {"/text maxLength": "content exceeds max length"}.
	ArgMessages map[string]string
	// PlainMethod also serves the tool as a plain JSON-RPC method of the same name
	// whose params are the arguments and whose result is the tool's result object,
	// for clients that never open an MCP session: such methods work without an
	// MCP initialize.
	PlainMethod bool
	// NeedsRoots marks a tool that works on a directory found from its
	// arguments or else the client's directory, and says whether one call
	// still has none: given the call's arguments and the client's working
	// directory (the shim's hello), true means the client's roots are
	// needed. On a modern (2026-07-28) connection, which cannot be sent
	// roots/list, such a call is answered by asking the client for its roots
	// first, and its retry may carry them (docs/protocol.md). The tools that
	// take RepoPath use repo.NeedsRoots.
	NeedsRoots func(args *jsonval.Doc, cwd string) bool
	// Handler does the work. It must return promptly once ctx is done. A
	// typed tool's is set by For or ForDoc.
	Handler Handler

	// input is the struct a typed tool's arguments bind to (For, ForDoc);
	// inPlace says the handler reads them from Call.Doc instead (ForDoc).
	input   reflect.Type
	inPlace bool
}

// Annotations are MCP tool annotations. All four are always sent, so a client
// never falls back to the protocol's pessimistic defaults by accident.
type Annotations struct {
	ReadOnly    bool `json:"readOnlyHint"`
	Destructive bool `json:"destructiveHint"`
	Idempotent  bool `json:"idempotentHint"`
	OpenWorld   bool `json:"openWorldHint"`
}

// Handler runs one call. It returns the result object (anything that marshals to
// a JSON object) or an error:
//   - a *[Error]: an isError result carrying its code, message and fields;
//   - a *[RPCError]: a JSON-RPC error response (a store is unavailable: -32000);
//   - ctx.Err() after cancellation or timeout: the protocol layer answers with
//     CANCELLED or TOOL_TIMEOUT as the contract says;
//   - any other error: an isError result with code INTERNAL, logged.
type Handler func(ctx context.Context, call *Call) (any, error)

// Family is a group of tools sharing state (a catalog, a store). The daemon
// opens each family once at start, adds its tools to the registry and closes it
// on shutdown.
type Family interface {
	Tools() []Tool
	Close() error
}

// Reloader is a family that can re-read its configuration on SIGHUP. A
// failed reload must leave the old state serving.
type Reloader interface {
	Reload() error
}

// Preloader is a family that opens before the daemon serves but leaves its
// slow part (the schema catalog's compile) for later: whatever needs that
// part waits for it, and gets what it would have had it loaded at open.
// The daemon calls Preload in the background once it serves, so that the
// first call rarely waits (docs/architecture.md, "The daemon's start").
// What can fail fatally must fail in the Opener, before the daemon serves.
type Preloader interface {
	Preload()
}

// Describer is a family that adds key=value fields to the daemon's readiness
// line (schemas_dir, examples_dir).
type Describer interface {
	ReadyFields() []string
}

// StoreDescriber is a family that keeps a durable store: Store says which
// (engine and where, never a credential), for daemon_status and
// `hearthd status`.
type StoreDescriber interface {
	Store() string
}

// ProblemReporter is a family that serves on with part of it missing (a
// schema file that did not load, an examples root that is gone): Problems
// says what, in sentences, for daemon_status and `hearthd status`.
type ProblemReporter interface {
	Problems() []string
}

// Resource is one MCP resource a family serves.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// ErrNoResource is what ReadResource returns for a URI it does not serve.
var ErrNoResource = errors.New("no such resource")

// ResourceProvider is a family that serves MCP resources (resources/list,
// resources/read). Both methods must be safe for concurrent use.
type ResourceProvider interface {
	Resources() []Resource
	// ReadResource returns the text and MIME type of one resource, or an
	// error wrapping ErrNoResource.
	ReadResource(uri string) (text, mimeType string, err error)
}

// Opener opens a family with the daemon's environment.
type Opener func(Env) (Family, error)

// Env is what the daemon hands a family when it opens it.
type Env struct {
	// Home is the data directory ($HEARTH_HOME), already checked by the version guard.
	Home string
	// Getenv reads the daemon's configuration (os.Getenv in production).
	Getenv func(string) string
	// Log writes structured logs to the daemon's stderr.
	Log *zap.Logger
	// Version is the daemon's build version (for toolingVersion and reports).
	Version string
}
