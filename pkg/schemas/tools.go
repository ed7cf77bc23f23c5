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

func obj(props string, required ...string) json.RawMessage {
	req := ""
	if len(required) > 0 {
		b, _ := json.Marshal(required)
		req = `,"required":` + string(b)
	}
	return json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{` + props + `}` + req + `}`)
}

// Tools declares the schema tools. All are also plain JSON-RPC methods, so
// clients that call them without an MCP session work unchanged.
func (f *Family) Tools() []tool.Tool {
	ro := tool.Annotations{ReadOnly: true, Idempotent: true}
	validateSchema := obj(`"asset":{"description":"The JSON document to validate."},`+
		`"schema":{"type":"string","description":"Name of the schema to validate against (see list_schemas); nested-synesthetic-asset is an alias of synesthetic-asset. Required: a missing or empty name is answered validation_failed."}`, "asset")
	return []tool.Tool{
		{Name: "list_schemas", Description: "Lists the loaded JSON Schemas as {ok, schemas:[{name, version, path}]}, sorted by name, version, path.",
			InputSchema: obj(``), SchemaVersion: 1, Annotations: ro, PlainMethod: true, Handler: f.listSchemas},
		{Name: "get_schema", Description: "Returns one schema as {ok, schema, version}, or {ok:false, reason:\"not_found\"}.",
			InputSchema:   obj(`"name":{"type":"string","minLength":1,"maxLength":256,"description":"The schema's name from list_schemas."}`, "name"),
			SchemaVersion: 1, Annotations: ro, PlainMethod: true, Handler: f.getSchema},
		{Name: "list_examples", Description: "Lists example documents as {ok, examples:[{component, path}]}, sorted by component then path.",
			InputSchema:   obj(`"component":{"type":"string","maxLength":256,"default":"all","description":"Only this component's examples (a schema name), or \"all\" (the default)."}`),
			SchemaVersion: 1, Annotations: ro, PlainMethod: true, Handler: f.listExamples},
		{Name: "get_example", Description: "Returns an example as {ok, example, schema, validated}, validated against its schema at call time; {ok:false, reason:\"not_found\"} or {ok:false, reason:\"validation_failed\", errors}. Paths that leave the examples root are refused.",
			InputSchema:   obj(`"path":{"type":"string","minLength":1,"maxLength":1024,"description":"The example's path from list_examples, relative to the examples root."}`, "path"),
			SchemaVersion: 1, Annotations: ro, PlainMethod: true, Handler: f.getExample},
		{Name: "validate_asset", Description: "Validates a JSON document against a schema (Draft 2020-12): {ok:true} or {ok:false, reason:\"validation_failed\", errors:[{path, msg}]} with RFC 6901 paths, sorted by path then msg.",
			InputSchema: validateSchema, SchemaVersion: 1, Annotations: ro, PlainMethod: true, Handler: f.validateAsset},
		{Name: "validate", Description: "Deprecated alias of validate_asset (identical behaviour; each use is logged). Use validate_asset.",
			InputSchema: validateSchema, SchemaVersion: 1, Annotations: ro, PlainMethod: true, Handler: f.validateAlias},
		{Name: "validate_many", Description: "Validates several documents against one schema: {ok:true, results:[{ok, errors?}]}. More than MCP_MAX_BATCH documents (default 100) is {ok:false, reason:\"unsupported\"}.",
			InputSchema: obj(`"assets":{"type":"array","description":"The documents to validate."},`+
				`"schema":{"type":"string","description":"Name of the schema to validate against."}`, "assets"),
			SchemaVersion: 1, Annotations: ro, PlainMethod: true, Handler: f.validateMany},
		{Name: "diff_assets", Description: "RFC 6902 patch from base to new: {ok:true, patch:[{op, path, value?}]} with add/remove/replace only, keys in sorted order, arrays replaced whole, sorted by path (remove < add < replace).",
			InputSchema:   obj(`"base":{"description":"The original document."},"new":{"description":"The changed document."}`, "base", "new"),
			SchemaVersion: 1, Annotations: ro, PlainMethod: true, Handler: f.diffAssets},
		{Name: "populate_backend", Description: "Validates an asset, then POSTs it to SYN_BACKEND_URL: {ok:true, asset_id, backend_url}, or {ok:false, reason:\"validation_failed\"|\"backend_error\"|\"unsupported\", errors?, status?, detail?}. An invalid asset is never sent.",
			InputSchema: obj(`"asset":{"description":"The synesthetic asset to persist; its top-level $schema, if it names a loaded schema, chooses the schema (else synesthetic-asset)."},`+
				`"validate_first":{"type":"boolean","default":true,"description":"Must be true (the default): hearth never persists an unvalidated asset; false is refused."}`, "asset"),
			SchemaVersion: 1, Annotations: tool.Annotations{OpenWorld: true}, PlainMethod: true, Handler: f.populateBackend},
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

func (f *Family) listSchemas(ctx context.Context, call *tool.Call) (any, error) {
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

func (f *Family) getSchema(ctx context.Context, call *tool.Call) (any, error) {
	var a struct{ Name string }
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	c, err := f.catalog()
	if err != nil {
		return nil, err
	}
	s, ok := c.Lookup(a.Name)
	if !ok {
		return notFound(), nil
	}
	// The schema's own bytes: never a re-encoding of a mutable value.
	return result{"ok": true, "schema": json.RawMessage(s.raw), "version": s.Version}, nil
}

func (f *Family) listExamples(ctx context.Context, call *tool.Call) (any, error) {
	var a struct{ Component string }
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	c, err := f.catalog()
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

func (f *Family) getExample(ctx context.Context, call *tool.Call) (any, error) {
	var a struct{ Path string }
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	c, err := f.catalog()
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
			schema = s.Name
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
	ok, errs, found := c.ValidateDoc(doc, schema)
	if !found {
		return failed([]validate.Violation{{Path: "", Msg: "unknown schema: " + truncate(schema, 100) + "; " + c.Available()}})
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
				name = s.Name
			}
		}
	}
	ok, errs, found := c.Validate(asset, name)
	if !found {
		return false, []backend.Violation{{Path: "", Msg: "no schema to validate the asset against: unknown schema " + AliasCanonical + "; " + c.Available()}}
	}
	var out []backend.Violation
	for _, v := range errs {
		out = append(out, backend.Violation(v))
	}
	return ok, out
}

func (f *Family) populateBackend(ctx context.Context, call *tool.Call) (any, error) {
	var a struct {
		Asset         json.RawMessage `json:"asset"`
		ValidateFirst *bool           `json:"validate_first"`
	}
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	if a.ValidateFirst != nil && !*a.ValidateFirst {
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
