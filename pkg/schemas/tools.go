package schemas

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/schemas/backend"
	"github.com/hearth-mcp/hearth/pkg/schemas/jsondiff"
	"github.com/hearth-mcp/hearth/pkg/tool"
	"github.com/hearth-mcp/hearth/pkg/validate"
)

// schemaArg is validate_asset's schema argument.
var schemaArg = tool.Prop("schema", `{"type":"string","title":"Schema","description":"The schema to validate against (see list_schemas): its name, or where several schemas share the name, name@version or its path; nested-synesthetic-asset is an alias of synesthetic-asset. Required: a missing or empty name is answered validation_failed, and an ambiguous one too, listing the candidates."}`)

// The result fields the schema tools share: ok, and when it is false why.
var (
	okOut     = tool.Prop("ok", `{"type":"boolean","description":"Whether the call succeeded; false comes with reason."}`).Required()
	reasonOut = tool.Prop("reason", `{"type":"string","enum":["not_found","validation_failed","unsupported","backend_error"],"description":"Why ok is false."}`)
	errorsOut = tool.Prop("errors", `{"type":"array","description":"The violations, sorted by path then msg.","items":{"type":"object","required":["path","msg"],
		"properties":{"path":{"type":"string","description":"RFC 6901 JSON Pointer into the document."},"msg":{"type":"string","description":"What is wrong."}}}}`)
	detailOut = tool.Prop("detail", `{"type":"string","description":"What was unsupported, or what went wrong."}`)
)

// schemaOutput is a schema tool's output schema: the shared fields and the
// tool's own.
func schemaOutput(own ...tool.Property) json.RawMessage {
	return tool.Output(append([]tool.Property{okOut, reasonOut, errorsOut, detailOut}, own...)...)
}

// The tools' arguments. validate_asset, validate_many and diff_assets read
// theirs in place (tool.ForDoc): the documents are the bulk of a call, and
// binding them would scan their text again.
type (
	getSchemaArgs struct {
		Name string `json:"name"`
	}
	listExamplesArgs struct {
		Component string `json:"component,omitempty"` // the binder fills in its default, "all"
	}
	getExampleArgs struct {
		Path string `json:"path"`
	}
	validateArgs struct {
		Asset  any    `json:"asset"`
		Schema string `json:"schema,omitempty"`
	}
	validateManyArgs struct {
		Assets []any  `json:"assets"`
		Schema string `json:"schema,omitempty"`
	}
	diffArgs struct {
		Base any `json:"base"`
		New  any `json:"new"`
	}
	populateArgs struct {
		Asset         json.RawMessage `json:"asset"`
		ValidateFirst bool            `json:"validate_first,omitempty"` // the binder fills in its default, true
	}
)

// Tools declares the schema tools. All are also plain JSON-RPC methods, so
// clients that call them without an MCP session work unchanged.
func (f *Family) Tools() []tool.Tool {
	ro := tool.Annotations{ReadOnly: true, Idempotent: true}
	validateSchema := tool.Object(tool.AnyValue("asset", "Asset", "The JSON document to validate.").Required(), schemaArg)
	return []tool.Tool{
		tool.For(tool.Tool{Name: "list_schemas", Title: "List schemas",
			Description: "Lists the loaded JSON Schemas as {ok, schemas:[{name, version, path}]}, sorted by name, version, path. Several schemas may share a name (v1/asset.json and v2/asset.json): each is listed, and the other tools take name@version or the path for it.",
			InputSchema: tool.Object(), OutputSchema: schemaOutput(tool.Prop("schemas", `{"type":"array","description":"The loaded schemas, sorted by name, version, path.","items":{"type":"object","required":["name","version","path"],
				"properties":{"name":{"type":"string","description":"The schema's name."},"version":{"type":"string","description":"Its version."},"path":{"type":"string","description":"Its path under the schemas root."}}}}`)),
			SchemaVersion: 4, Annotations: ro, PlainMethod: true}, f.listSchemas),
		tool.For(tool.Tool{Name: "get_schema", Title: "Get a schema",
			Description: "Returns one schema as {ok, schema, version, path}, or {ok:false, reason:\"not_found\"}; a name several schemas share is {ok:false, reason:\"validation_failed\", errors} listing them.",
			InputSchema: tool.Object(tool.Prop("name", `{"type":"string","minLength":1,"maxLength":1024,"title":"Schema","description":"The schema's name from list_schemas, or where several schemas share the name, name@version or its path."}`).Required()),
			OutputSchema: schemaOutput(tool.Prop("schema", `{"anyOf":[{"type":"object"},{"type":"boolean"}],"description":"The schema document, as its file holds it."}`),
				tool.Prop("version", `{"type":"string","description":"The schema's version."}`), tool.Prop("path", `{"type":"string","description":"Its path under the schemas root."}`)),
			SchemaVersion: 4, Annotations: ro, PlainMethod: true}, f.getSchema),
		tool.For(tool.Tool{Name: "list_examples", Title: "List examples",
			Description: "Lists example documents as {ok, examples:[{component, path}]}, sorted by component then path.",
			InputSchema: tool.Object(tool.Prop("component", `{"type":"string","maxLength":256,"default":"all","title":"Component","description":"Only this component's examples (a schema name), or \"all\" (the default)."}`)),
			OutputSchema: schemaOutput(tool.Prop("examples", `{"type":"array","description":"The examples, sorted by component then path.","items":{"type":"object","required":["component","path"],
				"properties":{"component":{"type":"string","description":"The schema the example is of."},"path":{"type":"string","description":"Its path under the examples root."}}}}`)),
			SchemaVersion: 3, Annotations: ro, PlainMethod: true}, f.listExamples),
		tool.For(tool.Tool{Name: "get_example", Title: "Get an example",
			Description: "Returns an example as {ok, example, schema, validated}, validated against its schema at call time; {ok:false, reason:\"not_found\"} or {ok:false, reason:\"validation_failed\", errors}. Paths that leave the examples root are refused.",
			InputSchema: tool.Object(tool.Prop("path", `{"type":"string","minLength":1,"maxLength":1024,"title":"Example","description":"The example's path from list_examples, relative to the examples root."}`).Required()),
			OutputSchema: schemaOutput(tool.Prop("example", `{"anyOf":[{"type":"object"},{"type":"array"},{"type":"string"},{"type":"number"},{"type":"boolean"},{"type":"null"}],"description":"The example document."}`), tool.Prop("schema", `{"type":"string","description":"The schema it was validated against (\"\" when none)."}`),
				tool.Prop("validated", `{"type":"boolean","description":"Whether it was validated."}`)),
			SchemaVersion: 3, Annotations: ro, PlainMethod: true}, f.getExample),
		tool.ForDoc[validateArgs](tool.Tool{Name: "validate_asset", Title: "Validate an asset",
			Description: "Validates a JSON document against a schema (Draft 2020-12): {ok:true} or {ok:false, reason:\"validation_failed\", errors:[{path, msg}]} with RFC 6901 paths, sorted by path then msg.",
			InputSchema: validateSchema, OutputSchema: schemaOutput(),
			SchemaVersion: 4, Annotations: ro, PlainMethod: true}, f.validateAsset),
		tool.ForDoc[validateArgs](tool.Tool{Name: "validate", Title: "Validate an asset (deprecated)",
			Description: "Deprecated alias of validate_asset (identical behaviour; each use is logged). Use validate_asset.",
			InputSchema: validateSchema, OutputSchema: schemaOutput(),
			SchemaVersion: 4, Annotations: ro, PlainMethod: true}, f.validateAlias),
		tool.ForDoc[validateManyArgs](tool.Tool{Name: "validate_many", Title: "Validate several assets",
			Description: "Validates several documents against one schema: {ok:true, results:[{ok, errors?}]}. More than MCP_MAX_BATCH documents (default 100) is {ok:false, reason:\"unsupported\"}.",
			InputSchema: tool.Object(tool.Prop("assets", `{"type":"array","title":"Assets","description":"The documents to validate."}`).Required(),
				tool.Prop("schema", `{"type":"string","title":"Schema","description":"The schema to validate against: its name, or where several schemas share the name, name@version or its path."}`)),
			OutputSchema: schemaOutput(tool.Prop("results", `{"type":"array","description":"One result per document, in order.","items":{"type":"object","required":["ok"],
				"properties":{"ok":{"type":"boolean","description":"Whether the document is valid."},"errors":{"type":"array","description":"Its violations.","items":{"type":"object"}}}}}`)),
			SchemaVersion: 4, Annotations: ro, PlainMethod: true}, f.validateMany),
		tool.ForDoc[diffArgs](tool.Tool{Name: "diff_assets", Title: "Diff two assets",
			Description: "RFC 6902 patch from base to new: {ok:true, patch:[{op, path, value?}]} with add/remove/replace only, keys in sorted order, arrays replaced whole, sorted by path (remove < add < replace).",
			InputSchema: tool.Object(tool.AnyValue("base", "Base", "The original document.").Required(),
				tool.AnyValue("new", "New", "The changed document.").Required()),
			OutputSchema: schemaOutput(tool.Prop("patch", `{"type":"array","description":"The RFC 6902 operations.","items":{"type":"object","required":["op","path"],
				"properties":{"op":{"type":"string","enum":["add","remove","replace"],"description":"The operation."},"path":{"type":"string","description":"RFC 6901 JSON Pointer."},"value":{"anyOf":[{"type":"object"},{"type":"array"},{"type":"string"},{"type":"number"},{"type":"boolean"},{"type":"null"}],"description":"The new value (add, replace)."}}}}`)),
			SchemaVersion: 3, Annotations: ro, PlainMethod: true}, f.diffAssets),
		tool.For(tool.Tool{Name: "populate_backend", Title: "Send an asset to the backend",
			Description: "Validates an asset, then POSTs it to SYN_BACKEND_URL: {ok:true, asset_id, backend_url}, or {ok:false, reason:\"validation_failed\"|\"backend_error\"|\"unsupported\", errors?, status?, detail?}. An invalid asset is never sent.",
			InputSchema: tool.Object(tool.AnyValue("asset", "Asset", "The synesthetic asset to persist; its top-level $schema, if it names a loaded schema, chooses the schema (else synesthetic-asset).").Required(),
				tool.Prop("validate_first", `{"type":"boolean","default":true,"title":"Validate first","description":"Must be true (the default): hearth never persists an unvalidated asset; false is refused."}`)),
			OutputSchema: schemaOutput(tool.Prop("asset_id", `{"type":"string","description":"The backend's id of the stored asset."}`),
				tool.Prop("backend_url", `{"type":"string","description":"The backend it was stored in (no password)."}`), tool.Prop("status", `{"type":"integer","description":"The backend's HTTP status, on a backend error."}`)),
			SchemaVersion: 3, Annotations: tool.Annotations{OpenWorld: true}, PlainMethod: true}, f.populateBackend),
	}
}

type result map[string]any

func notFound() result { return result{"ok": false, "reason": "not_found"} }

func failed(vs []validate.Violation) result {
	if vs == nil {
		vs = []validate.Violation{}
	}
	return result{"ok": false, "reason": "validation_failed", "errors": vs}
}

func (f *Family) listSchemas(ctx context.Context, call *tool.Call, _ struct{}) (any, error) {
	c, err := f.catalog()
	if err != nil {
		return nil, err
	}
	list := c.Schemas()
	if list == nil {
		list = []*Schema{}
	}
	return result{"ok": true, "schemas": list}, nil
}

func (f *Family) getSchema(ctx context.Context, call *tool.Call, a getSchemaArgs) (any, error) {
	c, err := f.catalog()
	if err != nil {
		return nil, err
	}
	s, err := c.Resolve(a.Name)
	if err != nil {
		if le := (*LookupError)(nil); errors.As(err, &le) && len(le.Candidates) > 1 {
			return failed([]validate.Violation{{Path: "/name", Msg: err.Error()}}), nil
		}
		return notFound(), nil
	}
	// The schema's own bytes: never a re-encoding of a mutable value.
	return result{"ok": true, "schema": json.RawMessage(s.raw), "version": s.Version, "path": s.Path}, nil
}

func (f *Family) listExamples(ctx context.Context, call *tool.Call, a listExamplesArgs) (any, error) {
	c, err := f.exampleCatalog()
	if err != nil {
		return nil, err
	}
	list := c.Examples(a.Component)
	if list == nil {
		list = []Example{}
	}
	return result{"ok": true, "examples": list}, nil
}

// decode reads a document the tools validate: jsonval accepts exactly what
// encoding/json does and gives the fast checker an ordered tree.
func decode(raw []byte) (*jsonval.Doc, error) { return jsonval.Parse(raw) }

func (f *Family) getExample(ctx context.Context, call *tool.Call, a getExampleArgs) (any, error) {
	c, err := f.exampleCatalog()
	if err != nil {
		return nil, err
	}
	raw, rel, err := c.exampleRoot.read(a.Path)
	if err != nil {
		var refused *refusedError
		if errors.As(err, &refused) {
			return failed([]validate.Violation{{Path: "", Msg: "path refused: " + err.Error()}}), nil
		}
		return notFound(), nil
	}
	doc, err := decode(raw)
	if err != nil {
		return failed([]validate.Violation{{Path: "", Msg: "the example is not valid JSON"}}), nil
	}
	schema := c.SchemaOf(doc)
	if schema == "" {
		if s, ok := c.Lookup(componentOf(rel)); ok {
			schema = c.RefOf(s)
		}
	}
	validated := false
	if schema != "" {
		ok, errs, _ := c.ValidateDoc(doc, schema)
		if !ok {
			return failed(errs), nil
		}
		validated = true
	}
	return result{"ok": true, "example": json.RawMessage(raw), "schema": schema, "validated": validated}, nil
}

// validateAsset reads the asset where the argument check decoded it: an
// asset is the bulk of the call, and binding it would scan its text again.
func (f *Family) validateAsset(ctx context.Context, call *tool.Call) (any, error) {
	args, err := call.Doc()
	if err != nil {
		return nil, err
	}
	c, err := f.catalog()
	if err != nil {
		return nil, err
	}
	asset := args.Get(args.Root(), "asset")
	if asset == nil {
		return nil, tool.Errorf(tool.InvalidRequest, "asset is required")
	}
	return validateDoc(c, args.Sub(asset), stringArg(args, "schema")), nil
}

// stringArg is a string argument's value, "" when absent (the input schema
// has checked its type).
func stringArg(args *jsonval.Doc, name string) string {
	if n := args.Get(args.Root(), name); n != nil {
		return args.Str(n)
	}
	return ""
}

func (f *Family) validateAlias(ctx context.Context, call *tool.Call) (any, error) {
	f.log.Warn("validate is a deprecated alias of validate_asset", zap.String("reason", "deprecated_alias"),
		zap.String("client", call.Client.Name))
	return f.validateAsset(ctx, call)
}

// validateDoc is validate_asset's result for a decoded asset.
func validateDoc(c *Catalog, doc *jsonval.Doc, schema string) result {
	if schema == "" {
		return failed([]validate.Violation{{Path: "", Msg: "schema is required: name the schema to validate against"}})
	}
	ok, errs, err := c.ValidateDoc(doc, schema)
	if err != nil {
		return failed([]validate.Violation{{Path: "", Msg: err.Error()}})
	}
	if !ok {
		return failed(errs)
	}
	return result{"ok": true}
}

func (f *Family) validateMany(ctx context.Context, call *tool.Call) (any, error) {
	args, err := call.Doc()
	if err != nil {
		return nil, err
	}
	assets := args.Get(args.Root(), "assets")
	if assets == nil || assets.Kind() != jsonval.Array {
		return nil, tool.Errorf(tool.InvalidRequest, "assets is required: an array of documents")
	}
	if assets.Len() > f.maxBatch {
		return result{"ok": false, "reason": "unsupported", "detail": "batch of " + strconv.Itoa(assets.Len()) + " assets exceeds MCP_MAX_BATCH=" + strconv.Itoa(f.maxBatch)}, nil
	}
	c, err := f.catalog()
	if err != nil {
		return nil, err
	}
	schema := stringArg(args, "schema")
	results := make([]result, 0, assets.Len())
	it := args.Kids(assets)
	for asset := it.Next(); asset != nil; asset = it.Next() {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r := validateDoc(c, args.Sub(asset), schema)
		delete(r, "reason") // the per-item shape: {ok, errors?}
		results = append(results, r)
	}
	return result{"ok": true, "results": results}, nil
}

// diffAssets diffs the two documents where the argument check decoded them,
// as validateAsset reads its asset.
func (f *Family) diffAssets(ctx context.Context, call *tool.Call) (any, error) {
	args, err := call.Doc()
	if err != nil {
		return nil, err
	}
	base, newDoc := args.Get(args.Root(), "base"), args.Get(args.Root(), "new")
	if base == nil || newDoc == nil {
		return nil, tool.Errorf(tool.InvalidRequest, "diff_assets: base and new are required")
	}
	return result{"ok": true, "patch": jsondiff.Diff(args.Sub(base), args.Sub(newDoc))}, nil
}

// validateForBackend is populate_backend's validator: the asset's own
// top-level $schema if it names a loaded schema, else synesthetic-asset.
func (f *Family) validateForBackend(asset any) (bool, []backend.Violation) {
	c, err := f.catalog()
	if err != nil {
		return false, []backend.Violation{{Path: "", Msg: err.Error()}}
	}
	name := AliasNested
	if m, ok := asset.(map[string]any); ok {
		if ref, ok := m["$schema"].(string); ok {
			if s := c.resolveRef(ref); s != nil {
				name = c.RefOf(s)
			}
		}
	}
	ok, errs, err := c.Validate(asset, name)
	if err != nil {
		return false, []backend.Violation{{Path: "", Msg: "no schema to validate the asset against: " + err.Error()}}
	}
	var out []backend.Violation
	for _, v := range errs {
		out = append(out, backend.Violation(v))
	}
	return ok, out
}

func (f *Family) populateBackend(ctx context.Context, call *tool.Call, a populateArgs) (any, error) {
	if !a.ValidateFirst {
		return failed([]validate.Violation{{Path: "/validate_first", Msg: "hearth never persists an unvalidated asset; validate_first must be true"}}), nil
	}
	if f.backendErr != nil {
		return result{"ok": false, "reason": "unsupported", "detail": "backend misconfigured: " + f.backendErr.Error()}, nil
	}
	// The backend client encodes what it POSTs from encoding/json's form.
	doc, err := validate.UnmarshalJSON(bytes.NewReader(a.Asset))
	if err != nil {
		return failed([]validate.Violation{{Path: "", Msg: "the asset is not valid JSON"}}), nil
	}
	res, err := f.backend.Populate(ctx, doc, true)
	if err != nil {
		return nil, err
	}
	return res, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
