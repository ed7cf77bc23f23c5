// Package jsonval decodes JSON into a compact, ordered document tree for
// code that reads a document many times or fast: objects keep their members
// in document order as a slice (no map, no hashing), numbers keep their
// literal text, and one decode makes a handful of allocations instead of one
// per value.
//
// It accepts exactly what encoding/json accepts and decodes strings exactly
// as it does (invalid UTF-8 and lone surrogates become U+FFFD), so Any gives
// the same value jsonschema.UnmarshalJSON would; FuzzAgreesWithEncodingJSON
// holds it to that.
package jsonval

import (
	"encoding/json"
	"slices"
	"strings"
)

// Kind is the JSON type of a Value.
type Kind uint8

// The kinds, in the order JSON Schema names its types.
const (
	Null Kind = iota
	False
	True
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"null", "false", "true", "number", "string", "array", "object"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// Value is one JSON value.
type Value struct {
	Kind Kind
	// plainInt: a Number whose literal is -?digits (no fraction, no
	// exponent), which JSON Schema's "integer" accepts without more work.
	plainInt bool
	// Str is a String's text or a Number's literal (as json.Number keeps it).
	Str string
	// Kids are an Array's items (Key "") or an Object's members, in document
	// order. A duplicated key appears as often as it was written; Any and
	// Get follow encoding/json, where the last one wins.
	Kids []Member
}

// Member is an object member, or (with Key "") an array item.
type Member struct {
	Key   string
	Value Value
}

// IsPlainInt reports whether a Number's literal has no fraction and no
// exponent. A literal that fails this may still be an integer (1.0, 1e2).
func (v *Value) IsPlainInt() bool { return v.Kind == Number && v.plainInt }

// Get returns an object's member value by key (the last one, as
// encoding/json keeps), or nil.
func (v *Value) Get(key string) *Value {
	if v.Kind != Object {
		return nil
	}
	for i := len(v.Kids) - 1; i >= 0; i-- {
		if v.Kids[i].Key == key {
			return &v.Kids[i].Value
		}
	}
	return nil
}

// Without returns the object without the members named keys. Values are
// never modified, so the result shares v's members: dropped members at the
// start or end cost nothing, and only one in the middle makes a copy.
func (v Value) Without(keys ...string) Value {
	if v.Kind != Object {
		return v
	}
	drop := func(m *Member) bool { return slices.Contains(keys, m.Key) }
	kids := v.Kids
	for len(kids) > 0 && drop(&kids[0]) {
		kids = kids[1:]
	}
	for len(kids) > 0 && drop(&kids[len(kids)-1]) {
		kids = kids[:len(kids)-1]
	}
	for i := range kids {
		if drop(&kids[i]) {
			kept := make([]Member, 0, len(kids)-1)
			for j := range kids {
				if !drop(&kids[j]) {
					kept = append(kept, kids[j])
				}
			}
			kids = kept
			break
		}
	}
	v.Kids = kids
	return v
}

// Any converts the value to the form encoding/json decodes into with
// UseNumber: nil, bool, json.Number, string, []any and map[string]any.
func (v *Value) Any() any {
	switch v.Kind {
	case False:
		return false
	case True:
		return true
	case Number:
		return json.Number(v.Str)
	case String:
		return v.Str
	case Array:
		out := make([]any, len(v.Kids))
		for i := range v.Kids {
			out[i] = v.Kids[i].Value.Any()
		}
		return out
	case Object:
		out := make(map[string]any, len(v.Kids))
		for i := range v.Kids {
			out[v.Kids[i].Key] = v.Kids[i].Value.Any()
		}
		return out
	}
	return nil
}

// FromAny converts a value in encoding/json's decoded form (with or without
// UseNumber) to a Value. Object members come out sorted by key, since a map
// has no order. It reports false for a value JSON cannot hold.
func FromAny(x any) (Value, bool) {
	switch t := x.(type) {
	case nil:
		return Value{Kind: Null}, true
	case bool:
		if t {
			return Value{Kind: True}, true
		}
		return Value{Kind: False}, true
	case string:
		return Value{Kind: String, Str: t}, true
	case json.Number:
		n, err := ParseString(string(t))
		return n, err == nil && n.Kind == Number
	case float64:
		b, err := json.Marshal(t)
		if err != nil {
			return Value{}, false
		}
		return FromAny(json.Number(b))
	case []any:
		kids := make([]Member, len(t))
		for i, e := range t {
			ev, ok := FromAny(e)
			if !ok {
				return Value{}, false
			}
			kids[i].Value = ev
		}
		return Value{Kind: Array, Kids: kids}, true
	case map[string]any:
		kids := make([]Member, 0, len(t))
		for k, e := range t {
			ev, ok := FromAny(e)
			if !ok {
				return Value{}, false
			}
			kids = append(kids, Member{Key: k, Value: ev})
		}
		sortMembers(kids)
		return Value{Kind: Object, Kids: kids}, true
	}
	return Value{}, false
}

func sortMembers(kids []Member) {
	slices.SortFunc(kids, func(a, b Member) int { return strings.Compare(a.Key, b.Key) })
}
