package tool

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/validate"
)

// checkInput reports the first way a typed tool's input struct and its
// input schema disagree, so that neither can change without the other:
//
//   - every property has a field that binds it (its json tag's name,
//     exactly) and every field binds a property, at every level of nested
//     objects;
//   - each field's type holds every JSON type the property allows (a
//     string, an integer, an object...; null binds as the zero value), and
//     a property of any JSON value binds to any or json.RawMessage;
//   - a required property is a plain field, neither a pointer nor tagged
//     omitempty; an optional one is a pointer or tagged omitempty;
//   - an optional property whose default is not the field's zero value,
//     while the schema accepts that zero value, binds to a pointer, so that
//     the handler can tell the argument's absence (the default) from the
//     zero value sent.
//
// compiled is the schema compiled, for the last rule.
func checkInput(schema json.RawMessage, in reflect.Type, compiled *validate.Schema) error {
	var root map[string]any
	if err := json.Unmarshal(schema, &root); err != nil {
		return err
	}
	t := in
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("the input type %v is not a struct", in)
	}
	c := inputChecker{compiled: compiled}
	return c.object(nil, root, t)
}

type inputChecker struct {
	compiled *validate.Schema
}

// object checks a struct type against an object schema.
func (c *inputChecker) object(path []string, s map[string]any, t reflect.Type) error {
	for i := range t.NumField() {
		if sf := t.Field(i); sf.Anonymous && sf.Tag.Get("json") != "-" {
			return fmt.Errorf("%s: embedded field %s of %v is not bound: name it", where(path), sf.Name, t)
		}
	}
	props, _ := s["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	fields := fieldsOf(t)
	byName := map[string]field{}
	for _, f := range fields {
		if other, dup := byName[f.name]; dup {
			return fmt.Errorf("%s: fields %s and %s of %v both bind %q", where(path), other.goName, f.goName, t, f.name)
		}
		byName[f.name] = f
		if _, ok := props[f.name]; !ok {
			return fmt.Errorf("%s: field %s of %v binds %q, which is not a property of the schema", where(path), f.goName, t, f.name)
		}
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f, ok := byName[name]
		if !ok {
			return fmt.Errorf("%s: property %q has no field in %v (a field binds the property its json tag names)", where(path), name, t)
		}
		ps, _ := props[name].(map[string]any)
		ft := t.Field(f.index).Type
		p := append(slices.Clip(path), name)
		pointer := ft.Kind() == reflect.Pointer
		// An argument's default is filled in by the binder (For), so a
		// top-level property with one may bind a plain field: absent is
		// the default, never the field's zero value.
		_, hasDefault := ps["default"]
		filled := hasDefault && len(path) == 0
		switch {
		case required[name] && pointer:
			return fmt.Errorf("%s: required property binds the pointer field %s of %v: a required argument is never absent", where(p), f.goName, t)
		case required[name] && f.omitEmpty:
			return fmt.Errorf("%s: required property binds field %s of %v, which is tagged omitempty", where(p), f.goName, t)
		case !required[name] && !pointer && !f.omitEmpty && !filled:
			return fmt.Errorf("%s: optional property binds field %s of %v, which is neither a pointer nor tagged omitempty", where(p), f.goName, t)
		}
		if err := c.value(p, ps, ft); err != nil {
			return err
		}
		if def, ok := ps["default"]; ok && !pointer && !filled {
			zero, accepted := c.zeroAccepted(p, ft)
			if !jsonEqual(zero, def) && accepted {
				return fmt.Errorf("%s: the property defaults to %s, and field %s of %v holds %s both when the argument is absent and when it is %s: make it a pointer",
					where(p), compact(def), f.goName, t, compact(zero), compact(zero))
			}
		}
	}
	return nil
}

// value checks a field's type against a property's schema (nil: any).
func (c *inputChecker) value(path []string, s map[string]any, ft reflect.Type) error {
	t := ft
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if holdsAnything(t) {
		return nil
	}
	types := jsonTypes(s)
	if anyType(types) {
		return fmt.Errorf("%s: the property takes any JSON value, which field type %v cannot hold: use any or json.RawMessage", where(path), ft)
	}
	holds := goHolds(t)
	for _, ty := range types {
		if ty != "null" && !slices.Contains(holds, ty) {
			return fmt.Errorf("%s: the property may be %s, which field type %v cannot hold", where(path), anA(ty), ft)
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		return c.object(path, branch(s, "object"), t)
	case reflect.Map:
		o := branch(s, "object")
		if ap, ok := o["additionalProperties"].(map[string]any); ok {
			if err := c.value(append(slices.Clip(path), "*"), ap, t.Elem()); err != nil {
				return err
			}
		}
		props, _ := o["properties"].(map[string]any)
		for name, ps := range props {
			m, _ := ps.(map[string]any)
			if err := c.value(append(slices.Clip(path), name), m, t.Elem()); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if items, ok := branch(s, "array")["items"].(map[string]any); ok {
			return c.value(append(slices.Clip(path), "*"), items, t.Elem())
		}
	}
	return nil
}

// zeroAccepted is the JSON of a type's zero value and whether the schema
// accepts it at path (no violation there, whatever else is missing).
func (c *inputChecker) zeroAccepted(path []string, t reflect.Type) (any, bool) {
	b, err := json.Marshal(reflect.Zero(t).Interface())
	if err != nil || slices.Contains(path, "*") {
		return nil, true
	}
	var zero any
	json.Unmarshal(b, &zero)
	doc := string(b)
	for i := len(path) - 1; i >= 0; i-- {
		k, _ := json.Marshal(path[i])
		doc = "{" + string(k) + ":" + doc + "}"
	}
	d, err := jsonval.ParseString(doc)
	if err != nil {
		return zero, true
	}
	at := pointer(path)
	for _, v := range c.compiled.Validate(d, nil) {
		if v.Path == at {
			return zero, false
		}
	}
	return zero, true
}

// holdsAnything: a field of this type takes any JSON value.
func holdsAnything(t reflect.Type) bool {
	return t == rawMessageType || (t.Kind() == reflect.Interface && t.NumMethod() == 0) ||
		reflect.PointerTo(t).Implements(jsonUnmarshalerType)
}

// goHolds lists the JSON types a field of type t binds.
func goHolds(t reflect.Type) []string {
	if t == numberType {
		return []string{"integer", "number"}
	}
	switch t.Kind() {
	case reflect.Bool:
		return []string{"boolean"}
	case reflect.String:
		return []string{"string"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return []string{"integer"}
	case reflect.Float32, reflect.Float64:
		return []string{"integer", "number"}
	case reflect.Slice, reflect.Array:
		return []string{"array"}
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			return []string{"object"}
		}
	case reflect.Struct:
		return []string{"object"}
	}
	return nil
}

// jsonTypes lists the JSON types a schema allows, from its type, const,
// enum, anyOf or oneOf; nil when it allows any value.
func jsonTypes(s map[string]any) []string {
	if s == nil {
		return nil
	}
	var out []string
	add := func(ty string) {
		if !slices.Contains(out, ty) {
			out = append(out, ty)
		}
	}
	switch ty := s["type"].(type) {
	case string:
		add(ty)
	case []any:
		for _, x := range ty {
			if name, ok := x.(string); ok {
				add(name)
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	if v, ok := s["const"]; ok {
		add(typeOf(v))
		return out
	}
	if e, ok := s["enum"].([]any); ok {
		for _, v := range e {
			add(typeOf(v))
		}
		return out
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		branches, ok := s[key].([]any)
		if !ok {
			continue
		}
		for _, b := range branches {
			m, _ := b.(map[string]any)
			bt := jsonTypes(m)
			if bt == nil {
				return nil
			}
			for _, ty := range bt {
				add(ty)
			}
		}
		return out
	}
	return nil
}

// anyType: the types (nil: no constraint) take any JSON value but null.
func anyType(types []string) bool {
	if types == nil {
		return true
	}
	for _, ty := range []string{"object", "array", "string", "number", "boolean"} {
		if !slices.Contains(types, ty) {
			return false
		}
	}
	return true
}

// branch is the part of s that describes values of one JSON type: s
// itself, or the anyOf or oneOf branch of that type.
func branch(s map[string]any, ty string) map[string]any {
	for _, key := range []string{"anyOf", "oneOf"} {
		branches, _ := s[key].([]any)
		for _, b := range branches {
			if m, ok := b.(map[string]any); ok && slices.Contains(jsonTypes(m), ty) {
				return m
			}
		}
	}
	return s
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

func anA(ty string) string {
	if strings.ContainsAny(ty[:1], "aeiou") {
		return "an " + ty
	}
	return "a " + ty
}

func where(path []string) string {
	if len(path) == 0 {
		return "inputSchema"
	}
	return "inputSchema property " + strings.Join(path, ".")
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
