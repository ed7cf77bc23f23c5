package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/validate"
)

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Definition is a tool as tools/list shows it: the MCP fields plus the
// contract's schemaVersion and toolingVersion (docs/protocol.md, the tool contract).
type Definition struct {
	Name           string          `json:"name"`
	Title          string          `json:"title,omitempty"`
	Description    string          `json:"description"`
	InputSchema    json.RawMessage `json:"inputSchema"`
	OutputSchema   json.RawMessage `json:"outputSchema,omitempty"`
	Annotations    Annotations     `json:"annotations"`
	SchemaVersion  int             `json:"schemaVersion"`
	ToolingVersion string          `json:"toolingVersion"`
	// Meta repeats the two versions under MCP's _meta, because SDK clients
	// (the TypeScript one among them) drop unknown top-level tool fields.
	Meta map[string]any `json:"_meta"`
}

// Keys of the versions in a definition's _meta (docs/decisions/0002).
const (
	MetaSchemaVersion  = "dev.hearth/schemaVersion"
	MetaToolingVersion = "dev.hearth/toolingVersion"
)

// Entry is a registered tool with its compiled input schema.
type Entry struct {
	Tool
	definition Definition
	// compiled is the compile of the schemas (compileSchemas): at Add, or
	// for a tool added with AddDeferred on its first use or at Compile,
	// whichever comes first; schema, output and compileErr are its result.
	compiled   sync.Once
	compileErr error
	schema     *validate.Schema
	output     *validate.Schema // nil without an OutputSchema
}

// Definition returns the tool's tools/list definition.
func (e *Entry) Definition() Definition { return e.definition }

// Registry holds the tools a daemon serves. Add all tools before serving; after
// that the registry is only read and is safe for concurrent use.
type Registry struct {
	mu             sync.RWMutex
	toolingVersion string
	byName         map[string]*Entry
	sorted         []*Entry
	resources      []ResourceProvider
}

// AddResources registers a family that serves MCP resources.
func (r *Registry) AddResources(p ResourceProvider) {
	r.mu.Lock()
	r.resources = append(r.resources, p)
	r.mu.Unlock()
}

// ResourceProviders are the registered resource providers, in order.
func (r *Registry) ResourceProviders() []ResourceProvider {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]ResourceProvider(nil), r.resources...)
}

// NewRegistry returns an empty registry whose definitions carry toolingVersion.
func NewRegistry(toolingVersion string) *Registry {
	return &Registry{toolingVersion: toolingVersion, byName: map[string]*Entry{}}
}

// Add checks t against the tool contract and registers it.
func (r *Registry) Add(t Tool) error {
	return r.add(t, false)
}

// AddDeferred is Add that checks the definition but leaves the compile of
// its schemas (the costly part: most of a daemon's registering time) for
// the tool's first call or Compile, whichever comes first; tools/list
// needs none of it. A schema that does not compile, a defect of the build
// that the tests of every served tool catch, then fails the tool's calls
// and Compile instead of the registering (docs/architecture.md, "The
// daemon's start").
func (r *Registry) AddDeferred(t Tool) error {
	return r.add(t, true)
}

// Compile compiles the schemas of every tool not compiled yet and returns
// what did not compile, each error naming its tool (nil: all did). Calls
// of a tool being compiled wait for it.
func (r *Registry) Compile() error {
	var errs []error
	for _, e := range r.List() {
		if err := e.ensureCompiled(); err != nil {
			errs = append(errs, fmt.Errorf("tool %q: %w", e.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (r *Registry) add(t Tool, deferred bool) error {
	e, err := define(t, r.toolingVersion)
	if err == nil && !deferred {
		err = e.ensureCompiled()
	}
	if err != nil {
		return fmt.Errorf("tool %q: %w", t.Name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byName[t.Name]; dup {
		return fmt.Errorf("tool %q: registered twice", t.Name)
	}
	r.byName[t.Name] = e
	i := sort.Search(len(r.sorted), func(i int) bool { return r.sorted[i].Name >= t.Name })
	r.sorted = append(r.sorted, nil)
	copy(r.sorted[i+1:], r.sorted[i:])
	r.sorted[i] = e
	return nil
}

// Lookup finds a tool by name.
func (r *Registry) Lookup(name string) (*Entry, bool) {
	r.mu.RLock()
	e, ok := r.byName[name]
	r.mu.RUnlock()
	return e, ok
}

// List returns the tools sorted by name.
func (r *Registry) List() []*Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]*Entry(nil), r.sorted...)
}

// Len is the number of registered tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.sorted)
}

// ToolingVersion is the build version every definition carries.
func (r *Registry) ToolingVersion() string { return r.toolingVersion }

// refuseLoader keeps tool schemas self-contained: nothing is ever fetched.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("tool schemas must be self-contained; refusing to load %s", url)
}

// define checks a tool's definition and builds its entry, all but the
// compile of its schemas (ensureCompiled).
func define(t Tool, toolingVersion string) (*Entry, error) {
	if !namePattern.MatchString(t.Name) {
		return nil, errors.New("name must be 1-64 letters, digits, '_' or '-'")
	}
	if strings.TrimSpace(t.Description) == "" {
		return nil, errors.New("description is empty")
	}
	if t.SchemaVersion < 1 {
		return nil, errors.New("schemaVersion must be a positive integer")
	}
	if t.Handler == nil {
		return nil, errors.New("no handler")
	}
	if t.Timeout < 0 {
		return nil, errors.New("negative timeout")
	}
	var shape struct {
		Schema               string                     `json:"$schema"`
		Type                 any                        `json:"type"`
		AdditionalProperties any                        `json:"additionalProperties"`
		Properties           map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(t.InputSchema, &shape); err != nil {
		return nil, fmt.Errorf("inputSchema is not a JSON object: %w", err)
	}
	if shape.Schema != "" && shape.Schema != "https://json-schema.org/draft/2020-12/schema" {
		return nil, fmt.Errorf("inputSchema $schema must be Draft 2020-12, got %q", shape.Schema)
	}
	if shape.Type != "object" {
		return nil, errors.New(`inputSchema must have "type":"object"`)
	}
	if shape.AdditionalProperties != false {
		return nil, errors.New(`inputSchema must have "additionalProperties":false (unknown arguments are rejected, never ignored)`)
	}
	for name, raw := range shape.Properties {
		var p struct {
			Description string          `json:"description"`
			Type        any             `json:"type"`
			Default     json.RawMessage `json:"default"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("property %q: %w", name, err)
		}
		if strings.TrimSpace(p.Description) == "" {
			return nil, fmt.Errorf("property %q has no description", name)
		}
		if name == t.TimeoutArg && p.Type != "integer" {
			return nil, fmt.Errorf("timeout argument %q must be an integer (milliseconds)", name)
		}
		if name == t.TimeoutArg && p.Default != nil {
			timeout := t.Timeout
			if timeout == 0 {
				timeout = DefaultTimeout
			}
			if ms, ok := timeoutOf(string(p.Default)); !ok || ms != timeout {
				return nil, fmt.Errorf("timeout argument %q defaults to %s ms, but the tool's timeout is %v", name, p.Default, timeout)
			}
		}
	}
	if t.TimeoutArg != "" {
		if _, ok := shape.Properties[t.TimeoutArg]; !ok {
			return nil, fmt.Errorf("timeout argument %q is not in the input schema", t.TimeoutArg)
		}
	}

	var compact bytes.Buffer
	if err := json.Compact(&compact, t.InputSchema); err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	e := &Entry{Tool: t}
	e.InputSchema = compact.Bytes()
	if t.OutputSchema != nil {
		var err error
		if e.OutputSchema, err = checkOutput(t); err != nil {
			return nil, fmt.Errorf("outputSchema: %w", err)
		}
	}
	e.definition = Definition{
		Name:           t.Name,
		Title:          t.Title,
		Description:    t.Description,
		InputSchema:    e.InputSchema,
		OutputSchema:   e.OutputSchema,
		Annotations:    t.Annotations,
		SchemaVersion:  t.SchemaVersion,
		ToolingVersion: toolingVersion,
		Meta:           map[string]any{MetaSchemaVersion: t.SchemaVersion, MetaToolingVersion: toolingVersion},
	}
	if checkResults && t.OutputSchema != nil {
		e.Handler = e.checkingResults(e.Handler)
	}
	return e, nil
}

// ensureCompiled compiles the entry's schemas once, and checks a typed
// tool's input struct against its compiled input schema.
func (e *Entry) ensureCompiled() error {
	e.compiled.Do(func() { e.compileErr = e.compileSchemas() })
	return e.compileErr
}

func (e *Entry) compileSchemas() error {
	sch, err := compileSchema(e.Tool.InputSchema, "hearth:tool/"+e.Name+".json")
	if err != nil {
		return fmt.Errorf("inputSchema: %w", err)
	}
	if e.input != nil {
		if err := checkInput(e.Tool.InputSchema, e.input, sch); err != nil {
			return fmt.Errorf("input %v disagrees with the schema: %w", e.input, err)
		}
	}
	var out *validate.Schema
	if e.Tool.OutputSchema != nil {
		if out, err = compileSchema(e.Tool.OutputSchema, "hearth:tool/"+e.Name+".output.json"); err != nil {
			return fmt.Errorf("outputSchema: %w", err)
		}
	}
	e.schema, e.output = sch, out
	return nil
}

// compileSchema compiles a self-contained schema document found at loc.
func compileSchema(raw json.RawMessage, loc string) (*validate.Schema, error) {
	doc, err := validate.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := validate.NewCompiler(refuseLoader{})
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("does not compile: %w", err)
	}
	return sch, nil
}

// checkOutput checks a tool's output schema's shape, an object (MCP puts
// only objects in structuredContent), and returns it compacted; it must
// also be self-contained, which its compile (compileSchemas) checks.
func checkOutput(t Tool) (json.RawMessage, error) {
	var shape struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(t.OutputSchema, &shape); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if shape.Type != "object" {
		return nil, errors.New(`must have "type":"object"`)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, t.OutputSchema); err != nil {
		return nil, err
	}
	return compact.Bytes(), nil
}

// CheckResult validates a result object (as the reply carries it) against
// the tool's output schema; nil when it holds or the tool declares none.
func (e *Entry) CheckResult(result json.RawMessage) error {
	if e.Tool.OutputSchema == nil {
		return nil
	}
	if err := e.ensureCompiled(); err != nil {
		return fmt.Errorf("%s: %w", e.Name, err)
	}
	doc, err := jsonval.ParseRaw(result)
	if err != nil {
		return fmt.Errorf("the result of %s is not JSON: %w", e.Name, err)
	}
	if vs := e.output.Validate(doc, nil); vs != nil {
		msgs := make([]string, 0, len(vs))
		for _, v := range vs {
			msgs = append(msgs, v.String())
		}
		return fmt.Errorf("the result of %s does not match its outputSchema: %s", e.Name, strings.Join(msgs, "; "))
	}
	return nil
}

// checkingResults wraps a handler so that a result that breaks the output
// schema is an INTERNAL error naming the violation, in builds for the
// end-to-end tests (checkResults): every tool result of every end-to-end
// run is checked against the schema clients are told.
func (e *Entry) checkingResults(h Handler) Handler {
	return func(ctx context.Context, call *Call) (any, error) {
		res, err := h(ctx, call)
		if err != nil || res == nil {
			return res, err
		}
		raw, merr := json.Marshal(res)
		if merr != nil {
			return res, err
		}
		if cerr := e.CheckResult(raw); cerr != nil {
			return nil, Errorf(Internal, "%s", cerr.Error())
		}
		return res, nil
	}
}

// maxReportedViolations bounds an INVALID_REQUEST reply: errors never echo a
// large input back.
const maxReportedViolations = 10

// Args are a call's checked arguments, as received and decoded.
type Args struct {
	Raw json.RawMessage
	Doc *jsonval.Doc
}

// CheckArgs validates a call's raw arguments against the tool's input schema.
// Missing arguments (nil or JSON null) count as {}. It returns the arguments to
// hand the handler, or an INVALID_REQUEST error naming what is wrong.
func (e *Entry) CheckArgs(raw json.RawMessage) (json.RawMessage, *Error) {
	a, err := e.Check(raw)
	return a.Raw, err
}

// Check is CheckArgs that also returns the decoded arguments, so the handler
// need not decode them again (see NewCall and Call.Doc). Arguments are
// decoded once, with jsonval, and checked by validate.Schema.Validate.
func (e *Entry) Check(raw json.RawMessage) (Args, *Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = json.RawMessage("{}")
	}
	if raw[0] != '{' {
		return Args{}, Errorf(InvalidRequest, "arguments of %s must be a JSON object", e.Name)
	}
	doc, err := jsonval.ParseRaw(raw)
	if err != nil {
		return Args{}, Errorf(InvalidRequest, "arguments of %s are not valid JSON: %s", e.Name, truncate(err.Error(), 200))
	}
	return e.check(raw, doc)
}

// CheckDoc is Check for arguments already decoded with jsonval.ParseRaw (a
// tools/call's, from the frame): nil means absent or null, which count as {}.
func (e *Entry) CheckDoc(doc *jsonval.Doc) (Args, *Error) {
	if doc == nil || doc.Root().Kind() == jsonval.Null {
		return e.Check(nil)
	}
	if doc.Root().Kind() != jsonval.Object {
		return Args{}, Errorf(InvalidRequest, "arguments of %s must be a JSON object", e.Name)
	}
	raw, ok := doc.Raw(doc.Root())
	if !ok {
		return Args{}, Errorf(Internal, "arguments of %s were decoded without their text", e.Name)
	}
	return e.check(json.RawMessage(raw), doc)
}

func (e *Entry) check(raw json.RawMessage, doc *jsonval.Doc) (Args, *Error) {
	if err := e.ensureCompiled(); err != nil {
		// A defect of the build (AddDeferred): the tool cannot check what
		// it is called with, so it is not called.
		return Args{}, Errorf(Internal, "tool %s cannot be called: its schema does not compile: %v", e.Name, err)
	}
	vs := e.schema.Validate(doc, e.ArgMessages)
	if vs == nil {
		return Args{raw, doc}, nil
	}
	msgs := make([]string, 0, len(vs))
	for i, v := range vs {
		if i == 3 {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(vs)-3))
			break
		}
		if isOverride(e.ArgMessages, v.Msg) {
			msgs = append(msgs, v.Msg) // a fixed message stands alone
			continue
		}
		msgs = append(msgs, v.String())
	}
	if len(vs) == 1 && isOverride(e.ArgMessages, vs[0].Msg) {
		return Args{}, &Error{Code: InvalidRequest, Message: vs[0].Msg, Fields: map[string]any{"errors": vs}}
	}
	if len(vs) > maxReportedViolations {
		vs = vs[:maxReportedViolations]
	}
	return Args{}, &Error{
		Code:    InvalidRequest,
		Message: "invalid arguments for " + e.Name + ": " + strings.Join(msgs, "; "),
		Fields:  map[string]any{"errors": vs},
	}
}

// CallTimeout returns the time limit for one call with the given (validated)
// arguments: the TimeoutArg's milliseconds, however the integer is written
// (600000, 6e5, 600000.0), else the tool's Timeout.
func (e *Entry) CallTimeout(args json.RawMessage) time.Duration {
	d := e.Timeout
	if d == 0 {
		d = DefaultTimeout
	}
	if e.TimeoutArg == "" {
		return d
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return d
	}
	if raw, ok := m[e.TimeoutArg]; ok {
		if t, ok := timeoutOf(string(bytes.TrimSpace(raw))); ok {
			return t
		}
	}
	return d
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func isOverride(m map[string]string, msg string) bool {
	for _, v := range m {
		if v == msg {
			return true
		}
	}
	return false
}
