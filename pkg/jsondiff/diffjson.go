package jsondiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// DiffJSON returns the patch that turns the JSON document base into new, in
// the package's order. Values in the operations are compact [json.RawMessage]
// copies, independent of the inputs. Malformed input (including invalid UTF-8)
// is a [*SyntaxError] naming the document and the byte offset.
func DiffJSON(base, new []byte) ([]Op, error) {
	a, err := parse(base)
	if err != nil {
		return nil, fmt.Errorf("jsondiff: base document: %w", err)
	}
	b, err := parse(new)
	if err != nil {
		return nil, fmt.Errorf("jsondiff: new document: %w", err)
	}
	d := rawDiffer{a: a, b: b, ops: []Op{}}
	d.diff(&a.root, &b.root)
	slices.SortFunc(d.ops, compareOps)
	return d.ops, nil
}

type rawDiffer struct {
	a, b *document
	path []byte // pointer of the location being compared
	ops  []Op
}

func (d *rawDiffer) emit(op string, value *node) {
	o := Op{Op: op, Path: string(d.path)}
	if value != nil {
		o.Value = json.RawMessage(compact(d.b.raw(value)))
	}
	d.ops = append(d.ops, o)
}

func (d *rawDiffer) diff(x, y *node) {
	if x.kind == kindObject && y.kind == kindObject {
		d.objects(x, y)
		return
	}
	if !equalNodes(d.a, x, d.b, y) {
		d.emit(Replace, y)
	}
}

// objects walks two objects' members in sorted key order.
func (d *rawDiffer) objects(x, y *node) {
	if bytes.Equal(d.a.raw(x), d.b.raw(y)) {
		return
	}
	d.a.sortMembers(x)
	d.b.sortMembers(y)
	xs, ys := d.a.children(x), d.b.children(y)
	mark := len(d.path)
	i, j := 0, 0
	for i < len(xs) || j < len(ys) {
		var c int
		switch {
		case i == len(xs):
			c = 1
		case j == len(ys):
			c = -1
		default:
			c = bytes.Compare(d.a.key(&xs[i]), d.b.key(&ys[j]))
		}
		switch {
		case c < 0:
			d.path = appendToken(d.path, d.a.key(&xs[i]))
			d.emit(Remove, nil)
			i++
		case c > 0:
			d.path = appendToken(d.path, d.b.key(&ys[j]))
			d.emit(Add, &ys[j])
			j++
		default:
			d.path = appendToken(d.path, d.a.key(&xs[i]))
			d.diff(&xs[i], &ys[j])
			i++
			j++
		}
		d.path = d.path[:mark]
	}
}

// equalNodes reports whether two parsed values are the same JSON value.
func equalNodes(da *document, x *node, db *document, y *node) bool {
	if x.kind != y.kind {
		return false
	}
	switch x.kind {
	case kindNull, kindTrue, kindFalse:
		return true
	case kindNumber:
		rx, ry := da.raw(x), db.raw(y)
		return bytes.Equal(rx, ry) || numbersEqual(string(rx), string(ry))
	case kindString:
		rx, ry := da.raw(x), db.raw(y)
		if bytes.Equal(rx, ry) {
			return true
		}
		if x.flags&escaped == 0 && y.flags&escaped == 0 {
			return false
		}
		return bytes.Equal(decodedString(rx, x), decodedString(ry, y))
	case kindArray:
		if bytes.Equal(da.raw(x), db.raw(y)) {
			return true
		}
		xs, ys := da.children(x), db.children(y)
		if len(xs) != len(ys) {
			return false
		}
		for i := range xs {
			if !equalNodes(da, &xs[i], db, &ys[i]) {
				return false
			}
		}
		return true
	case kindObject:
		if bytes.Equal(da.raw(x), db.raw(y)) {
			return true
		}
		da.sortMembers(x)
		db.sortMembers(y)
		xs, ys := da.children(x), db.children(y)
		if len(xs) != len(ys) {
			return false
		}
		for i := range xs {
			if !bytes.Equal(da.key(&xs[i]), db.key(&ys[i])) || !equalNodes(da, &xs[i], db, &ys[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func decodedString(raw []byte, n *node) []byte {
	if n.flags&escaped != 0 {
		return appendUnescaped(nil, raw)
	}
	return raw[1 : len(raw)-1]
}
