// Package validate is hearth's JSON Schema validation: it compiles schemas
// (Draft 2020-12, with santhosh-tekuri/jsonschema/v6), checks jsonval
// documents against them and reports what a rejected document violates.
// The tool registry checks call arguments with it and the schema catalog
// checks assets with it; nothing else needs to know the validator.
//
// [Schema.Validate] is the one way to check a document. It runs a fast
// check first: a schema whose keywords are all ones the fast check
// implements gets one at compile time, and it accepts a valid document
// without building the full validator's error tree. Only a document it
// rejects, or a schema without a fast check, goes to the full validator,
// which gives the violations (see docs/decisions/0011-one-decode-per-frame.md).
// The full validator runs behind the number guard of
// docs/decisions/0012-validator-number-guard.md.
package validate

import (
	"io"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// Schema is a compiled schema: the full validator's form and, when the
// schema allows it, its fast check. It is immutable and safe for concurrent
// use.
type Schema struct {
	full *jsonschema.Schema
	fast *fastSchema // nil: every document takes the full validator
}

func newSchema(s *jsonschema.Schema) *Schema {
	return &Schema{full: s, fast: compileFast(s)}
}

// Validate checks a document against the schema. It returns nil when the
// document is valid, else at least one violation: sorted by path then
// message, duplicates removed.
//
// messages, when not nil, replaces the validator's wording of specific
// violations. A key is a violation's JSON Pointer and its failing keyword,
// joined by a space: {"/text maxLength": "content exceeds max length"}.
func (s *Schema) Validate(d *jsonval.Doc, messages map[string]string) []Violation {
	// Most documents are valid: the fast check says so without building the
	// full validator's error tree.
	if s.fast != nil && s.fast.valid(d, d.Root()) {
		return nil
	}
	if err := fullValidate(s.full, d); err != nil {
		return violations(err, messages)
	}
	return nil
}

// FastVerdict is the fast check's verdict alone, and whether the schema has
// a fast check at all (checked is false when every document goes to the
// full validator). Callers validate with Validate; this is for tests and
// benchmarks that hold the fast check to a reference of its own, such as
// the official test suite, without the full validator behind it.
func (s *Schema) FastVerdict(d *jsonval.Doc) (valid, checked bool) {
	if s.fast == nil {
		return false, false
	}
	return s.fast.valid(d, d.Root()), true
}

// Loader resolves a URL for which the compiler holds no resource: it returns
// the document, decoded as UnmarshalJSON decodes it, or an error.
type Loader interface {
	Load(url string) (any, error)
}

// Compiler compiles schemas from documents added as resources, as Draft
// 2020-12 unless a document's $schema names another draft.
type Compiler struct{ c *jsonschema.Compiler }

// NewCompiler returns a compiler that asks l for every URL it holds no
// resource for: nothing is ever fetched but through l.
func NewCompiler(l Loader) *Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(l)
	return &Compiler{c}
}

// AddResource adds the document doc (decoded by UnmarshalJSON) under url.
func (c *Compiler) AddResource(url string, doc any) error { return c.c.AddResource(url, doc) }

// Compile compiles the schema at url, and its fast check when every keyword
// it reaches is one the fast check implements.
func (c *Compiler) Compile(url string) (*Schema, error) {
	s, err := c.c.Compile(url)
	if err != nil {
		return nil, err
	}
	return newSchema(s), nil
}

// UnmarshalJSON decodes one JSON document as the compiler and the full
// validator read documents: numbers as json.Number, objects as
// map[string]any.
func UnmarshalJSON(r io.Reader) (any, error) { return jsonschema.UnmarshalJSON(r) }
