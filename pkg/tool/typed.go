package tool

import (
	"context"
	"encoding/json"
	"reflect"
)

// HandlerFor is a handler that takes its arguments bound to In: a struct
// whose fields are the input schema's properties (see For). Out is its
// result: a struct (or a pointer to one) whose type says what it holds, or
// any for a result the tool's OutputSchema describes by hand.
type HandlerFor[In, Out any] func(ctx context.Context, call *Call, in In) (Out, error)

// For returns t with h as its handler, typed by In: the struct its
// arguments bind to. The registry checks In against t.InputSchema when t is
// added (a property without a field or a field without a property, a type
// either side cannot hold, a required property on an optional field or the
// reverse: see checkInput), so the schema the clients see and the struct
// the handler reads cannot drift apart. Each call's checked arguments are
// bound to a new In before h runs, as Call.Bind binds them; a value that
// does not fit is an INVALID_REQUEST naming its path.
//
// In follows the conventions of encoding/json and of the Go MCP SDK's
// typed tools: a field binds the property its json tag names; a required
// property is a plain field, an optional one a pointer or a field tagged
// omitempty. An argument the call leaves out that has a "default" in the
// schema is bound to that default, so the handler never repeats it; below
// the top level, where nothing is filled in, an optional property whose
// default is not the field's zero value binds a pointer (absent and zero
// must stay apart).
//
// A result typed by a struct Out gives the tool its OutputSchema, derived
// from Out (OutputOf) unless t declares one.
func For[In, Out any](t Tool, h HandlerFor[In, Out]) Tool {
	t.input = reflect.TypeFor[In]()
	t.inPlace = false
	if t.OutputSchema == nil {
		t.OutputSchema, _ = OutputOf(reflect.TypeFor[Out]()) // nil when Out is no struct
	}
	defaults := defaultsOf(t.InputSchema, reflect.TypeFor[In]())
	t.Handler = func(ctx context.Context, call *Call) (any, error) {
		var in In
		if err := call.Bind(&in); err != nil {
			return nil, err
		}
		if err := defaults.fill(call, &in); err != nil {
			return nil, err
		}
		out, err := h(ctx, call, in)
		if err != nil {
			return nil, err // never a typed nil in a non-nil interface
		}
		return out, nil
	}
	return t
}

// ForDoc is For for a handler that reads its arguments in place, from
// Call.Doc, instead of a bound copy: validate_asset and validate_many
// validate a large asset where the frame's decode left it
// (docs/decisions/0011-one-decode-per-frame.md). In declares the arguments
// and is checked against the input schema as For's is, but nothing is
// bound: the handler is h itself.
func ForDoc[In any](t Tool, h Handler) Tool {
	t.input = reflect.TypeFor[In]()
	t.inPlace = true
	t.Handler = h
	return t
}

// Input is the type a typed tool's arguments bind to (For, ForDoc), nil
// for an untyped one, and whether its handler reads them in place (ForDoc)
// instead of binding them.
func (t Tool) Input() (in reflect.Type, inPlace bool) { return t.input, t.inPlace }

// argDefault is an argument's default and the field it binds.
type argDefault struct {
	name  string
	index int
	value json.RawMessage
}

type argDefaults []argDefault

// defaultsOf lists the top-level properties of schema that have a default,
// with the fields of In they bind. A schema or type it cannot read has none:
// the registry refuses such a tool anyway.
func defaultsOf(schema json.RawMessage, in reflect.Type) argDefaults {
	if in.Kind() != reflect.Struct {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var out argDefaults
	for _, f := range fieldsOf(in) {
		if p, ok := s.Properties[f.name]; ok && p.Default != nil {
			out = append(out, argDefault{f.name, f.index, p.Default})
		}
	}
	return out
}

// fill binds the default of every argument the call leaves out.
func (ds argDefaults) fill(call *Call, in any) error {
	if len(ds) == 0 {
		return nil
	}
	d, err := call.Doc()
	if err != nil {
		return err
	}
	v := reflect.ValueOf(in).Elem()
	for _, def := range ds {
		if d.Get(d.Root(), def.name) != nil {
			continue
		}
		if err := json.Unmarshal(def.value, v.Field(def.index).Addr().Interface()); err != nil {
			return Errorf(Internal, "%s: the default of %s does not bind: %v", call.Tool, def.name, err)
		}
	}
	return nil
}
