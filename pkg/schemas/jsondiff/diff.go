package jsondiff

import (
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// Diff returns the patch that turns the document base into new, in the
// package's order. Each value in the operations is a compact
// [json.RawMessage] of new's text for it (see [jsonval.Doc.AppendCompact]),
// independent of the documents: they share one buffer, but each is capped
// at its own end.
func Diff(base, new *jsonval.Doc) []Op {
	d := differ{a: base, b: new, ops: []Op{}}
	d.diff(base.Root(), new.Root())
	from := 0
	for i := range d.ops {
		if to := d.ends[i]; to > from {
			d.ops[i].Value = json.RawMessage(d.text[from:to:to])
			from = to
		}
	}
	slices.SortFunc(d.ops, compareOps)
	return d.ops
}

// DiffJSON decodes the JSON texts base and new with [jsonval.ParseRaw] and
// returns [Diff] of them. Malformed input, and text that is not UTF-8, is a
// [*jsonval.SyntaxError] (wrapped, naming the document) with its byte offset.
func DiffJSON(base, new []byte) ([]Op, error) {
	a, err := parse(base)
	if err != nil {
		return nil, fmt.Errorf("jsondiff: base document: %w", err)
	}
	b, err := parse(new)
	if err != nil {
		return nil, fmt.Errorf("jsondiff: new document: %w", err)
	}
	return Diff(a, b), nil
}

func parse(text []byte) (*jsonval.Doc, error) {
	d, err := jsonval.ParseRaw(text)
	if err != nil {
		return nil, err
	}
	// jsonval reads invalid UTF-8 as U+FFFD, as encoding/json does; a
	// diff's input must be UTF-8. Outside strings such a byte is a syntax
	// error already, so only strings can hold one here.
	if !utf8.Valid(text) {
		i := 0
		for {
			r, size := utf8.DecodeRune(text[i:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			i += size
		}
		return nil, &jsonval.SyntaxError{Msg: "invalid UTF-8 in string", Offset: i}
	}
	return d, nil
}

type differ struct {
	a, b    *jsonval.Doc
	path    []byte          // pointer of the location being compared
	ops     []Op            // values not yet set: see ends
	ends    []int           // where each op's value text ends in text
	text    []byte          // the values' texts, one after another
	members []*jsonval.Node // sorted members of the objects being walked
}

// emit records an operation on the current path, with y's text as its value
// unless y is nil.
func (d *differ) emit(op string, y *jsonval.Node) {
	if y != nil {
		d.text = d.b.AppendCompact(d.text, y)
	}
	d.ops = append(d.ops, Op{Op: op, Path: string(d.path)})
	d.ends = append(d.ends, len(d.text))
}

func (d *differ) diff(x, y *jsonval.Node) {
	if x.Kind() == jsonval.Object && y.Kind() == jsonval.Object {
		d.objects(x, y)
		return
	}
	if !jsonval.Equal(d.a, x, d.b, y) {
		d.emit(Replace, y)
	}
}

// objects walks two objects' members in sorted key order (a duplicated key
// counts once, with its last value, as encoding/json reads it).
func (d *differ) objects(x, y *jsonval.Node) {
	if rx, ok := d.a.Raw(x); ok {
		if ry, ok := d.b.Raw(y); ok && rx == ry {
			return // the same text is the same value
		}
	}
	start := len(d.members)
	d.members = d.a.SortedMembers(d.members, x)
	mid := len(d.members)
	d.members = d.b.SortedMembers(d.members, y)
	end := len(d.members)
	mark := len(d.path)
	// d.members is read again at each step: walking a member's own object
	// may have grown it.
	for i, j := start, mid; i < mid || j < end; {
		switch {
		case j == end || i < mid && d.a.Key(d.members[i]) < d.b.Key(d.members[j]):
			d.path = appendToken(d.path, d.a.Key(d.members[i]))
			d.emit(Remove, nil)
			i++
		case i == mid || d.a.Key(d.members[i]) > d.b.Key(d.members[j]):
			d.path = appendToken(d.path, d.b.Key(d.members[j]))
			d.emit(Add, d.members[j])
			j++
		default:
			d.path = appendToken(d.path, d.a.Key(d.members[i]))
			d.diff(d.members[i], d.members[j])
			i++
			j++
		}
		d.path = d.path[:mark]
	}
	d.members = d.members[:start]
}
