// Package jsonval decodes JSON into a compact, ordered document for code that
// reads a document fast, such as a schema checker: every value is a 20-byte
// Node in one flat, pointer-free slice (the garbage collector never scans it),
// an object's members and an array's items are contiguous Nodes in document
// order (no map, no hashing), strings are offsets into the input text, and
// numbers keep their literal text. One decode makes a handful of allocations.
//
// It accepts exactly what encoding/json accepts and decodes strings exactly
// as it does (invalid UTF-8 and lone surrogates become U+FFFD), so Any gives
// the same value jsonschema.UnmarshalJSON would; FuzzAgreesWithEncodingJSON
// holds it to that.
package jsonval

import (
	"encoding/json"
	"slices"
)

// Kind is the JSON type of a Node.
type Kind uint8

// The kinds.
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

// Doc is a decoded document. It is immutable: share it freely.
type Doc struct {
	src   string // the input; strings without escapes are slices of it
	extra string // the text of strings that needed unescaping
	nodes []Node
	root  Node
}

// Node is one value: its kind, the key it has in its object (for a member),
// and either its text (a string's, or a number's literal) or its children.
type Node struct {
	kind   Kind
	flags  uint8
	keyOff uint32
	keyLen uint32
	a, b   uint32 // text: offset and length; container: first child and count
}

const (
	plainInt   uint8 = 1 << iota // a number literal -?digits: no fraction, no exponent
	keyInExtra                   // the key's text is in Doc.extra
	strInExtra                   // the string's text is in Doc.extra
)

// Root is the document's top-level value.
func (d *Doc) Root() *Node { return &d.root }

// Kind is the node's JSON type.
func (n *Node) Kind() Kind { return n.kind }

// IsPlainInt reports whether a Number's literal has no fraction and no
// exponent. A literal that fails this may still be an integer (1.0, 1e2).
func (n *Node) IsPlainInt() bool { return n.flags&plainInt != 0 }

// Len is the number of an array's items or an object's members.
func (n *Node) Len() int {
	if n.kind < Array {
		return 0
	}
	return int(n.b)
}

// Kids are an array's items or an object's members, in document order. A
// duplicated key appears as often as it was written; Get and Any follow
// encoding/json, where the last one wins.
func (d *Doc) Kids(n *Node) []Node {
	if n.kind < Array {
		return nil
	}
	return d.nodes[n.a : n.a+n.b : n.a+n.b]
}

// Key is an object member's key ("" for anything else).
func (d *Doc) Key(n *Node) string {
	if n.flags&keyInExtra != 0 {
		return d.extra[n.keyOff : n.keyOff+n.keyLen]
	}
	return d.src[n.keyOff : n.keyOff+n.keyLen]
}

// Str is a String's text or a Number's literal (as json.Number keeps it).
func (d *Doc) Str(n *Node) string {
	if n.kind != String && n.kind != Number {
		return ""
	}
	if n.flags&strInExtra != 0 {
		return d.extra[n.a : n.a+n.b]
	}
	return d.src[n.a : n.a+n.b]
}

// Get returns an object member by key (the last one, as encoding/json
// keeps), or nil.
func (d *Doc) Get(n *Node, key string) *Node {
	kids := d.Kids(n)
	if n.kind != Object {
		return nil
	}
	for i := len(kids) - 1; i >= 0; i-- {
		if d.Key(&kids[i]) == key {
			return &kids[i]
		}
	}
	return nil
}

// Without returns the document with the top-level members named keys
// removed (the document itself is unchanged). Members dropped at the start
// or end of the object cost nothing; only one in the middle makes a copy.
func (d *Doc) Without(keys ...string) *Doc {
	if d.root.kind != Object {
		return d
	}
	drop := func(n *Node) bool { return slices.Contains(keys, d.Key(n)) }
	first, count := d.root.a, d.root.b
	for count > 0 && drop(&d.nodes[first]) {
		first, count = first+1, count-1
	}
	for count > 0 && drop(&d.nodes[first+count-1]) {
		count--
	}
	if count == d.root.b {
		return d
	}
	out := *d
	out.root.a, out.root.b = first, count
	for i := first; i < first+count; i++ {
		if drop(&d.nodes[i]) {
			// The kept members go after a copy of the nodes (appending to
			// the clipped slice reallocates, so d is not touched).
			nodes := slices.Clip(d.nodes)
			start := uint32(len(nodes))
			for j := first; j < first+count; j++ {
				if !drop(&d.nodes[j]) {
					nodes = append(nodes, d.nodes[j])
				}
			}
			out.nodes, out.root.a, out.root.b = nodes, start, uint32(len(nodes))-start
			break
		}
	}
	return &out
}

// Any converts the document to the form encoding/json decodes into with
// UseNumber: nil, bool, json.Number, string, []any and map[string]any.
func (d *Doc) Any() any { return d.AnyOf(&d.root) }

// AnyOf converts one node (and what it holds) the same way.
func (d *Doc) AnyOf(n *Node) any {
	switch n.kind {
	case False:
		return false
	case True:
		return true
	case Number:
		return json.Number(d.Str(n))
	case String:
		return d.Str(n)
	case Array:
		kids := d.Kids(n)
		out := make([]any, len(kids))
		for i := range kids {
			out[i] = d.AnyOf(&kids[i])
		}
		return out
	case Object:
		kids := d.Kids(n)
		out := make(map[string]any, len(kids))
		for i := range kids {
			out[d.Key(&kids[i])] = d.AnyOf(&kids[i])
		}
		return out
	}
	return nil
}

// FromAny converts a value in encoding/json's decoded form (with or without
// UseNumber) to a Doc. Object members come out sorted by key, since a map
// has no order.
func FromAny(x any) (*Doc, error) {
	raw, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	return Parse(raw)
}
