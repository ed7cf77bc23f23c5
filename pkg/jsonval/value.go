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
//
// Equal tells whether two documents' values are the same JSON value, numbers
// compared exactly on their decimal text (1 and 1.0 are equal, two integers
// past float64's precision are not); EqualAny does the same for values in
// encoding/json's decoded form.
package jsonval

import (
	"encoding/json"
	"slices"
	"unsafe"
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
//
// Its nodes are in document order (pre-order): each container is followed by
// its whole subtree, so walking a document reads memory front to back, and
// the decoder writes every node once, where it belongs.
type Doc struct {
	src   string // the input; strings without escapes are slices of it
	extra string // the text of strings that needed unescaping
	nodes []Node
	root  Node   // the top-level value (kept out of nodes so Without can edit it)
	first uint32 // index of the root's first child
	// spans are the nodes' source text (ParseRaw only, else nil), beside
	// the nodes rather than in them so that reading a document does not pay
	// for them.
	spans    []span
	rootSpan span
}

type span struct{ from, to uint32 }

// Node is one value: its kind, the key it has in its object (for a member),
// and either its text (a string's, or a number's literal) or, for a
// container, how many children it has and where its subtree ends.
type Node struct {
	kind   Kind
	flags  uint8
	keyOff uint32
	keyLen uint32
	a, b   uint32 // text: offset and length; container: child count and subtree end
}

const (
	plainInt   uint8 = 1 << iota // a number literal -?digits: no fraction, no exponent
	keyInExtra                   // the key's text is in Doc.extra
	strInExtra                   // the string's text is in Doc.extra
)

// Size is roughly how many bytes the document holds: its text, unescaped
// strings, nodes and spans. A document and its Subs share them.
func (d *Doc) Size() int {
	return len(d.src) + len(d.extra) + cap(d.nodes)*int(unsafe.Sizeof(Node{})) + cap(d.spans)*int(unsafe.Sizeof(span{}))
}

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
	return int(n.a)
}

// Iter walks an array's items or an object's members in document order. A
// duplicated key appears as often as it was written; Get and Any follow
// encoding/json, where the last one wins.
type Iter struct {
	nodes []Node
	i     uint32 // the next child's index
	left  uint32 // children not yet returned
}

// Kids starts an iteration over n's children (none for a scalar). n must
// be d's root or a node of d.
func (d *Doc) Kids(n *Node) Iter {
	if n.kind < Array {
		return Iter{}
	}
	if n == &d.root {
		return Iter{d.nodes, d.first, n.a}
	}
	// n's children follow it: its index is its offset in d.nodes.
	return Iter{d.nodes, d.index(n) + 1, n.a}
}

// index is n's position in d.nodes, from its address: nodes are only ever
// handed out as pointers into d.nodes, and the result is checked against
// the slice, so a node of another document panics instead of misreading.
func (d *Doc) index(n *Node) uint32 {
	if len(d.nodes) > 0 {
		const size = unsafe.Sizeof(Node{})
		off := uintptr(unsafe.Pointer(n)) - uintptr(unsafe.Pointer(&d.nodes[0]))
		if i := off / size; off%size == 0 && i < uintptr(len(d.nodes)) && &d.nodes[i] == n {
			return uint32(i)
		}
	}
	panic("jsonval: a node of another document")
}

// Next returns the next child, or nil when there is none.
func (it *Iter) Next() *Node {
	if it.left == 0 {
		return nil
	}
	it.left--
	n := &it.nodes[it.i]
	if n.kind >= Array {
		it.i = n.b
	} else {
		it.i++
	}
	return n
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
	if n.kind != Object {
		return nil
	}
	var found *Node
	for it := d.Kids(n); ; {
		m := it.Next()
		if m == nil {
			return found
		}
		if d.Key(m) == key {
			found = m
		}
	}
}

// Sub returns the value n as a document of its own, sharing d's memory (n
// must be d's root or a node of d).
func (d *Doc) Sub(n *Node) *Doc {
	if n == &d.root {
		return d
	}
	i := d.index(n)
	out := &Doc{src: d.src, extra: d.extra, nodes: d.nodes, root: *n, spans: d.spans}
	out.root.keyOff, out.root.keyLen, out.root.flags = 0, 0, n.flags&^keyInExtra
	if n.kind >= Array {
		out.first = i + 1
	}
	if d.spans != nil {
		out.rootSpan = d.spans[i]
	}
	return out
}

// Raw is n's JSON text exactly as it was in the input (escapes, spacing
// and all), for a document from ParseRaw; false for one from Parse, and for
// the root of a Without that removed something (its text is not the input's).
func (d *Doc) Raw(n *Node) (string, bool) {
	if d.spans == nil {
		return "", false
	}
	sp := d.rootSpan
	if n != &d.root {
		sp = d.spans[d.index(n)]
	}
	return d.src[sp.from:sp.to], true
}

// Without returns the document with the top-level members named keys
// removed (the document itself is unchanged). Members dropped at the start
// or end of the object cost nothing; only one in the middle makes a copy.
func (d *Doc) Without(keys ...string) *Doc {
	if d.root.kind != Object {
		return d
	}
	drop := func(n *Node) bool { return slices.Contains(keys, d.Key(n)) }
	// One pass finds the kept members' first index, count and whether they
	// are contiguous (nothing dropped between two of them).
	first, kept, contiguous, gap := uint32(0), uint32(0), true, false
	for it := d.Kids(&d.root); ; {
		at := it.i
		m := it.Next()
		if m == nil {
			break
		}
		switch {
		case drop(m):
			gap = kept > 0
		case kept == 0:
			first, kept = at, 1
		default:
			contiguous = contiguous && !gap
			kept++
		}
	}
	if kept == d.root.a {
		return d
	}
	out := *d
	out.root.a, out.first = kept, first
	out.spans = nil // the root's text is not the input's
	if contiguous {
		return &out
	}
	// Copy the kept subtrees together; their subtree ends move with them.
	nodes := make([]Node, 0, len(d.nodes))
	for it := d.Kids(&d.root); ; {
		from := it.i
		m := it.Next()
		if m == nil {
			break
		}
		if drop(m) {
			continue
		}
		shift := int64(len(nodes)) - int64(from)
		for _, n := range d.nodes[from:it.i] {
			if n.kind >= Array {
				n.b = uint32(int64(n.b) + shift)
			}
			nodes = append(nodes, n)
		}
	}
	out.nodes, out.first = nodes, 0
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
		out := make([]any, 0, n.a)
		for it := d.Kids(n); ; {
			m := it.Next()
			if m == nil {
				return out
			}
			out = append(out, d.AnyOf(m))
		}
	case Object:
		out := make(map[string]any, n.a)
		for it := d.Kids(n); ; {
			m := it.Next()
			if m == nil {
				return out
			}
			out[d.Key(m)] = d.AnyOf(m)
		}
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
