package validate

import (
	"fmt"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// fullValidate runs the full validator on a document. Every full
// validation goes through it, never through Schema.Validate of
// santhosh-tekuri/jsonschema directly, because that validator converts
// numbers to exact rationals with math/big, and two kinds of number it must
// not be handed (docs/decisions/0012-validator-number-guard.md):
//
//   - a number with more than maxDigits digits: math/big converts decimal
//     text in quadratic time, so one 1 000 000-digit number costs seconds
//     of CPU. The document is answered at once with a violation at the
//     first such number, before anything converts it.
//   - a number math/big refuses to parse (an exponent beyond ±1 000 000,
//     such as 1E1000001): v6.0.3 dereferences the nil *big.Rat when a
//     numeric keyword (minimum, maximum, exclusive*, multipleOf,
//     uniqueItems) meets one, and a client would get a crash-shaped
//     -32603 for a document it may send. That panic is answered as a
//     violation at the number's path; any other panic is a bug and goes on
//     up.
//
// Both are a *numberRangeError.
func fullValidate(s *jsonschema.Schema, d *jsonval.Doc) (err error) {
	if path, found := findNumber(d, d.Root(), nil, number.tooLong); found {
		return &numberRangeError{Path: pointer(path), tooLong: true}
	}
	defer func() {
		if r := recover(); r != nil {
			path, found := findNumber(d, d.Root(), nil, number.unparsable)
			if !found {
				panic(r)
			}
			err = &numberRangeError{Path: pointer(path)}
		}
	}()
	return s.Validate(d.Any())
}

// numberRangeError is a number too large (or too long) to compare exactly:
// its decimal exponent is beyond what math/big parses, or it has more than
// maxDigits digits.
type numberRangeError struct {
	Path    string
	tooLong bool
}

func (e *numberRangeError) Error() string {
	if e.tooLong {
		return fmt.Sprintf("number out of range: it has more than %d digits, too many to compare against the schema", maxDigits)
	}
	return "number out of range: its exponent is too large to compare against the schema"
}

// findNumber finds the first number, in document order, that bad reports,
// and its path. It reads literals only: nothing is converted.
func findNumber(d *jsonval.Doc, v *jsonval.Node, path []string, bad func(number) bool) ([]string, bool) {
	switch v.Kind() {
	case jsonval.Number:
		return path, bad(readNumber(d.Str(v)))
	case jsonval.Array, jsonval.Object:
		it := d.Kids(v)
		for i, m := 0, it.Next(); m != nil; i, m = i+1, it.Next() {
			tok := d.Key(m)
			if v.Kind() == jsonval.Array {
				tok = strconv.Itoa(i)
			}
			if p, ok := findNumber(d, m, append(path, tok), bad); ok {
				return p, true
			}
		}
	}
	return nil, false
}
