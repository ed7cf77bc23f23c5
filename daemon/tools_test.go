package daemon

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/tool"
)

// servedTools are the tools hearthd serves: daemon_status and every family
// of Families, opened as hearthd opens them.
func servedTools(t *testing.T) []*tool.Entry {
	t.Helper()
	home := t.TempDir()
	env := tool.Env{Home: home, Getenv: func(string) string { return "" }, Log: zap.NewNop(), Version: "test"}
	d, err := New(Options{Config: Config{Mode: ModeStdio}, Log: zap.NewNop(), Env: env, Openers: Families(nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.closeFamilies)
	// The daemon compiles its tools' schemas after it serves: every one
	// must compile (a failure would only fail that tool's calls then).
	if err := d.Registry().Compile(); err != nil {
		t.Fatal(err)
	}
	return d.Registry().List()
}

// TestEveryToolIsTyped: every tool hearthd serves declares the struct its
// arguments bind to (tool.For, tool.ForDoc), so the registry has checked
// that struct against the tool's input schema; none binds by hand.
func TestEveryToolIsTyped(t *testing.T) {
	for _, e := range servedTools(t) {
		if in, _ := e.Input(); in == nil {
			t.Errorf("tool %s is not typed: declare it with tool.For (or tool.ForDoc)", e.Name)
		}
	}
}

// TestEveryToolHasAnOutputSchema: every tool hearthd serves publishes the
// schema of its result (outputSchema in tools/list), derived from its result
// type (tool.For) or written with tool.Output; the end-to-end tests' hearthd
// checks every result against it.
func TestEveryToolHasAnOutputSchema(t *testing.T) {
	for _, e := range servedTools(t) {
		if e.Definition().OutputSchema == nil {
			t.Errorf("tool %s has no outputSchema: return a struct from its handler, or set OutputSchema (tool.Output)", e.Name)
		}
	}
}

// TestToolSchemasArePortable holds every input schema to what clients that
// map tool schemas onto narrower dialects accept, as the MCP Inspector's
// --strict mode checks it (test/inspector_test.go runs the Inspector
// itself): no type arrays, no subschema that constrains nothing, no bare
// boolean schema where a schema object is expected, no remote $ref; and
// each argument has a title (clients label their forms with it), a
// description, and a type or typed anyOf branches.
func TestToolSchemasArePortable(t *testing.T) {
	for _, e := range servedTools(t) {
		var schema map[string]any
		if err := json.Unmarshal(e.Definition().InputSchema, &schema); err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		var findings []string
		lint(schema, "", "", &findings)
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			m, _ := p.(map[string]any)
			for _, key := range []string{"title", "description"} {
				if s, _ := m[key].(string); strings.TrimSpace(s) == "" {
					findings = append(findings, fmt.Sprintf("%s: no %s", name, key))
				}
			}
			if _, typed := m["type"].(string); !typed && !typedBranches(m["anyOf"]) {
				findings = append(findings, name+": neither a type nor anyOf branches of one type each")
			}
		}
		if e.Definition().Title == "" {
			findings = append(findings, "the tool has no title")
		}
		slices.Sort(findings)
		for _, f := range findings {
			t.Errorf("tool %s: %s", e.Name, f)
		}
	}
}

func typedBranches(v any) bool {
	branches, _ := v.([]any)
	for _, b := range branches {
		m, _ := b.(map[string]any)
		if _, ok := m["type"].(string); !ok {
			return false
		}
	}
	return len(branches) > 0
}

// The keywords of the Inspector's schema lint (clients/cli of
// @modelcontextprotocol/inspector): those that hold subschemas, those whose
// value may be a bare boolean, and those that constrain a value.
var (
	subschemaMaps   = []string{"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}
	subschemaArrays = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	subschemaOne    = []string{"items", "contains", "not", "propertyNames", "if", "then", "else", "additionalProperties",
		"unevaluatedProperties", "additionalItems", "unevaluatedItems", "contentSchema"}
	booleanValued = []string{"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"}
	constraining  = []string{"type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
		"maxLength", "minLength", "pattern", "format", "contentMediaType", "contentEncoding", "contentSchema", "maxItems", "minItems",
		"uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required", "dependentRequired",
		"allOf", "anyOf", "oneOf", "not", "items", "prefixItems", "contains", "additionalItems", "unevaluatedItems", "properties",
		"patternProperties", "additionalProperties", "unevaluatedProperties", "propertyNames", "dependentSchemas", "dependencies",
		"$ref", "$dynamicRef", "$recursiveRef"}
)

// lint walks a schema as the Inspector does and lists what it would report.
func lint(node any, path, keyword string, findings *[]string) {
	at := path
	if at == "" {
		at = "(root)"
	}
	if b, ok := node.(bool); ok {
		if !slices.Contains(booleanValued, keyword) {
			*findings = append(*findings, fmt.Sprintf("%s: bare %v where a schema is expected", at, b))
		}
		return
	}
	m, ok := node.(map[string]any)
	if !ok {
		return
	}
	if _, isArray := m["type"].([]any); isArray {
		*findings = append(*findings, at+": type is an array")
	}
	if ref, _ := m["$ref"].(string); ref != "" && !strings.HasPrefix(ref, "#") {
		*findings = append(*findings, at+": remote $ref "+ref)
	}
	constrains := false
	for _, k := range constraining {
		if _, ok := m[k]; ok {
			constrains = true
		}
	}
	_, hasIf := m["if"]
	_, hasThen := m["then"]
	_, hasElse := m["else"]
	if !constrains && !(hasIf && (hasThen || hasElse)) && keyword != "not" {
		*findings = append(*findings, at+": constrains nothing (any value)")
	}
	for _, k := range subschemaMaps {
		sub, _ := m[k].(map[string]any)
		for name, s := range sub {
			lint(s, path+"/"+k+"/"+name, k, findings)
		}
	}
	for _, k := range subschemaArrays {
		sub, _ := m[k].([]any)
		for i, s := range sub {
			lint(s, fmt.Sprintf("%s/%s/%d", path, k, i), k, findings)
		}
	}
	for _, k := range subschemaOne {
		if s, ok := m[k]; ok {
			lint(s, path+"/"+k, k, findings)
		}
	}
}

// TestLintFindsWhatTheInspectorReports: the lint above reports the
// findings the Inspector's --strict mode reported before the schemas were
// made portable.
func TestLintFindsWhatTheInspectorReports(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type":"object","properties":{"asset":{"description":"any"}}}`:                           "/properties/asset: constrains nothing",
		`{"type":"object","properties":{"r":{"type":["string","null"],"description":"r"}}}`:        "/properties/r: type is an array",
		`{"type":"object","properties":{"x":true}}`:                                                "/properties/x: bare true",
		`{"type":"object","additionalProperties":false,"properties":{"x":{"$ref":"https://e/s"}}}`: "/properties/x: remote $ref",
		`{"type":"object","additionalProperties":true,"properties":{"x":{"not":{}}}}`:              "",
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(schema), &m); err != nil {
			t.Fatal(err)
		}
		var findings []string
		lint(m, "", "", &findings)
		got := strings.Join(findings, "; ")
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", schema, got, want)
		}
	}
}
