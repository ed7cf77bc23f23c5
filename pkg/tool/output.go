package tool

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// OutputOf derives an output schema (Tool.OutputSchema) from a result type:
// a struct's exported fields as properties named by their json tags
// (embedded structs flattened, as encoding/json does), the fields without
// omitempty required (but not those an embedded pointer brings, which a nil
// pointer leaves out). A Go type says what JSON it becomes, so a typed result
// and its schema cannot drift apart; For derives it for a handler that
// returns a struct. A type with its own MarshalJSON constrains nothing it
// cannot know, and any field whose type is any, neither.
//
// A field's tags add what its type cannot say, so a derived schema says as
// much as a hand-written one: jsonschema is its description (the Go MCP
// SDK's convention), enum the strings it may be (comma-separated), const
// its one value (a string for a string field, else a JSON literal) and
// minimum its least number.
func OutputOf(t reflect.Type) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("a result type must be a struct, not %v", t)
	}
	var b bytes.Buffer
	b.WriteString(`{"$schema":"https://json-schema.org/draft/2020-12/schema",`)
	writeStruct(&b, t, map[reflect.Type]bool{})
	b.WriteByte('}')
	return b.Bytes(), nil
}

// anyJSON is the schema of any JSON value, spelled one branch per type as
// portable schemas are (docs/architecture.md, the tool contract), never {}.
const anyJSON = `{"anyOf":[{"type":"object"},{"type":"array"},{"type":"string"},{"type":"number"},{"type":"boolean"},{"type":"null"}]}`

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	timeType          = reflect.TypeFor[time.Time]()
	rawType           = reflect.TypeFor[json.RawMessage]()
)

// writeStruct writes an object schema's members (without braces).
func writeStruct(b *bytes.Buffer, t reflect.Type, seen map[reflect.Type]bool) {
	type prop struct {
		name string
		t    reflect.Type
		tag  reflect.StructTag
	}
	var props []prop
	var required []string
	// Fields promoted from an embedded pointer are absent when it is nil:
	// none of them is required.
	var collect func(t reflect.Type, optional bool)
	collect = func(t reflect.Type, optional bool) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := f.Type
			if f.Anonymous && name == "" {
				viaPointer := optional
				for ft.Kind() == reflect.Pointer {
					ft, viaPointer = ft.Elem(), true
				}
				if ft.Kind() == reflect.Struct {
					collect(ft, viaPointer)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			props = append(props, prop{name, f.Type, f.Tag})
			if !optional && !hasOption(opts, "omitempty") && !hasOption(opts, "omitzero") {
				required = append(required, name)
			}
		}
	}
	collect(t, false)
	b.WriteString(`"type":"object"`)
	writeRequired(b, required)
	b.WriteString(`,"properties":{`)
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
		}
		n, _ := json.Marshal(p.name)
		b.Write(n)
		b.WriteByte(':')
		writeField(b, p.t, p.tag, seen)
	}
	b.WriteByte('}')
}

// writeField writes the schema of a field: its type's, with the keywords
// its tags add (see OutputOf).
func writeField(b *bytes.Buffer, t reflect.Type, tag reflect.StructTag, seen map[reflect.Type]bool) {
	var extra bytes.Buffer
	if c, ok := tag.Lookup("const"); ok {
		extra.WriteString(`,"const":`)
		writeLiteral(&extra, t, c)
	}
	if e, ok := tag.Lookup("enum"); ok {
		extra.WriteString(`,"enum":[`)
		for i, v := range strings.Split(e, ",") {
			if i > 0 {
				extra.WriteByte(',')
			}
			q, _ := json.Marshal(v)
			extra.Write(q)
		}
		extra.WriteByte(']')
	}
	if m, ok := tag.Lookup("minimum"); ok {
		extra.WriteString(`,"minimum":`)
		writeLiteral(&extra, reflect.TypeFor[float64](), m)
	}
	if d, ok := tag.Lookup("jsonschema"); ok {
		q, _ := json.Marshal(d)
		extra.WriteString(`,"description":`)
		extra.Write(q)
	}
	if extra.Len() == 0 {
		writeType(b, t, seen)
		return
	}
	var own bytes.Buffer
	writeType(&own, t, seen)
	b.Write(own.Bytes()[:own.Len()-1]) // every type's schema is an object: open it again
	b.Write(extra.Bytes())
	b.WriteByte('}')
}

// writeLiteral writes v as a JSON value for a field of type t: a string for
// a string field, else v itself when it is JSON (a string when it is not).
func writeLiteral(b *bytes.Buffer, t reflect.Type, v string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.String && json.Valid([]byte(v)) {
		b.WriteString(v)
		return
	}
	q, _ := json.Marshal(v)
	b.Write(q)
}

// writeType writes the schema of one value of type t.
func writeType(b *bytes.Buffer, t reflect.Type, seen map[reflect.Type]bool) {
	switch {
	case t == timeType:
		b.WriteString(`{"type":"string"}`)
		return
	case t == rawType || t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
		b.WriteString(anyJSON) // its own JSON: any value
		return
	case t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType):
		b.WriteString(`{"type":"string"}`)
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		b.WriteString(`{"anyOf":[`)
		writeType(b, t.Elem(), seen)
		b.WriteString(`,{"type":"null"}]}`)
	case reflect.String:
		b.WriteString(`{"type":"string"}`)
	case reflect.Bool:
		b.WriteString(`{"type":"boolean"}`)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		b.WriteString(`{"type":"integer"}`)
	case reflect.Float32, reflect.Float64:
		b.WriteString(`{"type":"number"}`)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			b.WriteString(`{"type":"string"}`) // base64, as encoding/json writes it
			return
		}
		// A nil slice is written null: a result type keeps its slices
		// non-nil where the schema says array (the check finds the slip).
		b.WriteString(`{"type":"array","items":`)
		writeType(b, t.Elem(), seen)
		b.WriteByte('}')
	case reflect.Map:
		b.WriteString(`{"type":"object","additionalProperties":`)
		writeType(b, t.Elem(), seen)
		b.WriteByte('}')
	case reflect.Struct:
		if seen[t] {
			b.WriteString(`{"type":"object"}`) // a recursive type: one level is enough to say
			return
		}
		seen[t] = true
		b.WriteByte('{')
		writeStruct(b, t, seen)
		b.WriteByte('}')
		delete(seen, t)
	default: // interface: any JSON value
		b.WriteString(anyJSON)
	}
}
