package jsondiff

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Diff returns the patch that turns base into new, in the package's order.
// Both are values as encoding/json decodes them into an any: nil, bool,
// string, json.Number (preferred: exact) or float64, []any and map[string]any;
// Go integer types are accepted too. Another type, a NaN or infinity, a
// malformed json.Number or nesting deeper than 10000 is a [*ValueError] naming
// where it was found. Values in the operations are shared with new, not copied.
func Diff(base, new any) ([]Op, error) {
	d := valueDiffer{ops: []Op{}}
	d.diff(base, new, 0)
	if d.err != nil {
		return nil, d.err
	}
	slices.SortFunc(d.ops, compareOps)
	return d.ops, nil
}

// ValueError is a decoded value that is not JSON.
type ValueError struct {
	Path string // RFC 6901 pointer of the bad value
	Msg  string
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("value at %q: %s", e.Path, e.Msg)
}

// check walks a value and rejects what cannot be JSON. The path is built only
// on the way out of an error, so a valid document costs no pointer strings.
func check(v any, depth int) error {
	if depth > maxDepth {
		return &ValueError{Msg: fmt.Sprintf("nesting deeper than %d", maxDepth)}
	}
	switch x := v.(type) {
	case nil, bool, string, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return nil
	case json.Number:
		if !validNumber(string(x)) {
			return &ValueError{Msg: fmt.Sprintf("malformed number %.40q", string(x))}
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return &ValueError{Msg: "NaN or infinity is not a JSON number"}
		}
	case float32:
		return check(float64(x), depth)
	case []any:
		for i, e := range x {
			if err := check(e, depth+1); err != nil {
				return prefixed(err, strconv.Itoa(i))
			}
		}
	case map[string]any:
		for k, e := range x {
			if err := check(e, depth+1); err != nil {
				return prefixed(err, k)
			}
		}
	default:
		return &ValueError{Msg: fmt.Sprintf("unsupported type %T", v)}
	}
	return nil
}

func prefixed(err error, token string) error {
	ve := err.(*ValueError)
	ve.Path = string(appendToken(nil, token)) + ve.Path
	return ve
}

// valueDiffer checks the documents as it diffs them, so a valid pair is walked
// about once: equal parts are validated by the equality walk itself, and only
// what differs (removed, added, replaced) is checked on its own.
type valueDiffer struct {
	path []byte
	ops  []Op
	err  error // the first invalid value found
}

func (d *valueDiffer) diff(a, b any, depth int) {
	if d.err != nil {
		return
	}
	ma, aObj := a.(map[string]any)
	mb, bObj := b.(map[string]any)
	if aObj && bObj {
		if depth > maxDepth {
			d.invalid("base", &ValueError{Msg: fmt.Sprintf("nesting deeper than %d", maxDepth)})
			return
		}
		d.objects(ma, mb, depth)
		return
	}
	if equalValues(a, b, depth) {
		return // equalValues is true only for valid JSON values
	}
	if err := check(a, depth); err != nil {
		d.invalid("base", err)
		return
	}
	if err := check(b, depth); err != nil {
		d.invalid("new", err)
		return
	}
	d.ops = append(d.ops, Op{Op: Replace, Path: string(d.path), Value: b})
}

// invalid records the first bad value, with its full path.
func (d *valueDiffer) invalid(which string, err error) {
	if d.err != nil {
		return
	}
	if ve, ok := err.(*ValueError); ok {
		ve.Path = string(d.path) + ve.Path
	}
	d.err = fmt.Errorf("jsondiff: %s document: %w", which, err)
}

// objects compares two objects member by member. Go maps have no order, and
// sorting their keys costs more than the diff; the walk order does not show
// in the result, because no two operations share a path and the patch is
// sorted at the end, which is the same patch a walk in sorted key order gives.
func (d *valueDiffer) objects(a, b map[string]any, depth int) {
	mark := len(d.path)
	for k, av := range a {
		d.path = appendToken(d.path, k)
		if bv, ok := b[k]; ok {
			d.diff(av, bv, depth+1)
		} else if err := check(av, depth+1); err != nil {
			d.invalid("base", err)
		} else {
			d.ops = append(d.ops, Op{Op: Remove, Path: string(d.path)})
		}
		d.path = d.path[:mark]
	}
	for k, bv := range b {
		if _, ok := a[k]; !ok {
			d.path = appendToken(d.path, k)
			if err := check(bv, depth+1); err != nil {
				d.invalid("new", err)
			} else {
				d.ops = append(d.ops, Op{Op: Add, Path: string(d.path), Value: bv})
			}
			d.path = d.path[:mark]
		}
	}
}

// Equal reports whether a and b (decoded JSON: maps, slices, strings,
// bools, nil, float64 or json.Number) are the same JSON value, numbers
// compared exactly by value (1 and 1.0 are equal). Values nested deeper
// than the diff's depth limit, or that are not JSON, are never equal.
func Equal(a, b any) bool { return equalValues(a, b, 0) }

// equalValues reports whether a and b are valid and the same JSON value. It
// returns false for anything that is not JSON, so a true answer also vouches
// for every value it walked.
func equalValues(a, b any, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValues(x[i], y[i], depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalValues(xv, yv, depth+1) {
				return false
			}
		}
		return true
	}
	// Fast paths for the common pairs; numberText handles the rest exactly.
	switch x := a.(type) {
	case float64:
		if y, ok := b.(float64); ok {
			return x == y && !math.IsInf(x, 0) // exact, -0 == 0, NaN never equal
		}
	case json.Number:
		if y, ok := b.(json.Number); ok {
			return validNumber(string(x)) && validNumber(string(y)) && numbersEqual(string(x), string(y))
		}
	}
	xs, ok := numberText(a)
	if !ok {
		return false
	}
	ys, ok := numberText(b)
	return ok && numbersEqual(xs, ys)
}

// numberText returns a number's JSON text; false for what is not a JSON number.
func numberText(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return string(x), validNumber(string(x))
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), !math.IsNaN(x) && !math.IsInf(x, 0)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0)
	case int:
		return strconv.FormatInt(int64(x), 10), true
	case int8:
		return strconv.FormatInt(int64(x), 10), true
	case int16:
		return strconv.FormatInt(int64(x), 10), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint:
		return strconv.FormatUint(uint64(x), 10), true
	case uint8:
		return strconv.FormatUint(uint64(x), 10), true
	case uint16:
		return strconv.FormatUint(uint64(x), 10), true
	case uint32:
		return strconv.FormatUint(uint64(x), 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	}
	return "", false
}
