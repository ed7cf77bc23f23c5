package jsonval

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Equal reports whether node x of document a and node y of document b are
// the same JSON value: objects with the same members, whatever their order
// (a duplicated key counts once, with its last value, as encoding/json
// decodes it), arrays with equal items in the same order, strings with the
// same text once unescaped, and numbers with the same value, compared
// exactly on their decimal text: 1, 1.0 and 1e0 are equal (as RFC 6902 §4.6
// defines for "test"), 9007199254740993 and 9007199254740992 are not,
// however large the numbers. true is not 1. a and b may be one document.
func Equal(a *Doc, x *Node, b *Doc, y *Node) bool {
	var c comparer
	eq := c.equal(a, x, b, y)
	c.release()
	return eq
}

// comparer holds the sorted members of the objects being compared, for
// objects whose keys are not already in order.
type comparer struct{ buf *[]*Node }

// scratch keeps comparers' member buffers between calls.
var scratch = sync.Pool{New: func() any { return new([]*Node) }}

func (c *comparer) release() {
	if c.buf != nil {
		b := *c.buf
		clear(b[:cap(b)]) // hold on to no document
		if cap(b) > 1<<12 {
			b = nil
		}
		*c.buf = b[:0]
		scratch.Put(c.buf)
	}
}

func (c *comparer) equal(a *Doc, x *Node, b *Doc, y *Node) bool {
	if x.kind != y.kind {
		return false
	}
	switch x.kind {
	case String:
		return a.Str(x) == b.Str(y)
	case Number:
		return numbersEqual(a.Str(x), b.Str(y))
	case Array, Object:
		// The same text is the same value.
		if rx, ok := a.Raw(x); ok {
			if ry, ok := b.Raw(y); ok && rx == ry {
				return true
			}
		}
		if x.kind == Object {
			return c.objects(a, x, b, y)
		}
		if x.a != y.a {
			return false
		}
		ix, iy := a.Kids(x), b.Kids(y)
		for m := ix.Next(); m != nil; m = ix.Next() {
			if !c.equal(a, m, b, iy.Next()) {
				return false
			}
		}
	}
	return true // null, false, true, or equal containers
}

func (c *comparer) objects(a *Doc, x *Node, b *Doc, y *Node) bool {
	// Keys in strictly increasing order (a document written from a sorted
	// map) have no duplicates and pair up as they are.
	if a.keysIncrease(x) && b.keysIncrease(y) {
		if x.a != y.a {
			return false
		}
		ix, iy := a.Kids(x), b.Kids(y)
		for m := ix.Next(); m != nil; m = ix.Next() {
			if n := iy.Next(); a.Key(m) != b.Key(n) || !c.equal(a, m, b, n) {
				return false
			}
		}
		return true
	}
	if c.buf == nil {
		c.buf = scratch.Get().(*[]*Node)
	}
	start := len(*c.buf)
	*c.buf = a.SortedMembers(*c.buf, x)
	mid := len(*c.buf)
	*c.buf = b.SortedMembers(*c.buf, y)
	end := len(*c.buf)
	eq := c.sortedEqual(a, b, start, mid, end)
	*c.buf = (*c.buf)[:start]
	return eq
}

// sortedEqual compares the sorted members buf[start:mid] of a with
// buf[mid:end] of b.
func (c *comparer) sortedEqual(a, b *Doc, start, mid, end int) bool {
	if mid-start != end-mid {
		return false
	}
	for i := range mid - start {
		if a.Key((*c.buf)[start+i]) != b.Key((*c.buf)[mid+i]) {
			return false
		}
	}
	for i := range mid - start {
		// Read the buffer again each time: comparing the members' own
		// objects may have grown it.
		if !c.equal(a, (*c.buf)[start+i], b, (*c.buf)[mid+i]) {
			return false
		}
	}
	return true
}

// keysIncrease reports whether an object's keys are in strictly increasing
// byte order.
func (d *Doc) keysIncrease(n *Node) bool {
	it := d.Kids(n)
	m := it.Next()
	if m == nil {
		return true
	}
	prev := d.Key(m)
	for m = it.Next(); m != nil; m = it.Next() {
		k := d.Key(m)
		if k <= prev {
			return false
		}
		prev = k
	}
	return true
}

// SortedMembers appends an object's members to buf as encoding/json keeps
// them, one per key (the last of a duplicated key), in increasing byte
// order of their keys, and returns the extended buffer. For a value that is
// not an object it appends nothing. n must be d's root or a node of d.
func (d *Doc) SortedMembers(buf []*Node, n *Node) []*Node {
	if n.kind != Object {
		return buf
	}
	start := len(buf)
	inOrder := true
	for it := d.Kids(n); ; {
		m := it.Next()
		if m == nil {
			break
		}
		if len(buf) > start && d.Key(m) <= d.Key(buf[len(buf)-1]) {
			inOrder = false
		}
		buf = append(buf, m)
	}
	if inOrder {
		return buf
	}
	ms := buf[start:]
	// Stable: the members of a duplicated key stay in document order, so
	// the last of each run is the one encoding/json keeps.
	slices.SortStableFunc(ms, func(p, q *Node) int { return strings.Compare(d.Key(p), d.Key(q)) })
	kept := ms[:0]
	for i, m := range ms {
		if i+1 < len(ms) && d.Key(m) == d.Key(ms[i+1]) {
			continue
		}
		kept = append(kept, m)
	}
	clear(ms[len(kept):])
	return buf[:start+len(kept)]
}

// EqualAny reports whether a and b, values in the form encoding/json decodes
// into (nil, bool, string, json.Number or float64, []any, map[string]any;
// Go's integer types and float32 are accepted too), are the same JSON value,
// as Equal defines it. Anything that is not JSON (a NaN, an infinity, a
// malformed json.Number, another type, nesting deeper than MaxDepth) is
// never equal.
func EqualAny(a, b any) bool { return equalAny(a, b, 0) }

func equalAny(a, b any, depth int) bool {
	if depth > MaxDepth {
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
			if !equalAny(x[i], y[i], depth+1) {
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
			if !ok || !equalAny(xv, yv, depth+1) {
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

// validNumber reports whether s is exactly one JSON number, by the
// decoder's own grammar.
func validNumber(s string) bool {
	if s == "" || s[0] != '-' && (s[0] < '0' || '9' < s[0]) {
		return false
	}
	d := decoder{s: s}
	_, err := d.number()
	return err == nil && d.i == len(s)
}

// decimal is a valid JSON number split into its parts, without any
// rounding: the value is ±(intPart.frac) × 10^exp.
type decimal struct {
	neg     bool
	intPart string
	frac    string
	exp     string // the exponent's text, sign included; "" for none
}

func splitNumber(s string) decimal {
	var d decimal
	if s != "" && s[0] == '-' {
		d.neg = true
		s = s[1:]
	}
	i := skipDigits(s, 0)
	d.intPart, s = s[:i], s[i:]
	if s != "" && s[0] == '.' {
		j := skipDigits(s, 1)
		d.frac, s = s[1:j], s[j:]
	}
	if s != "" {
		d.exp = s[1:] // past the 'e' or 'E'
	}
	return d
}

func skipDigits(s string, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// digit returns the i-th digit of intPart followed by frac.
func (d *decimal) digit(i int) byte {
	if i < len(d.intPart) {
		return d.intPart[i]
	}
	return d.frac[i-len(d.intPart)]
}

// significant returns the span [first, last] of the digits between the
// first and the last nonzero one, or zero=true when every digit is 0.
func (d *decimal) significant() (first, last int, zero bool) {
	n := len(d.intPart) + len(d.frac)
	for first < n && d.digit(first) == '0' {
		first++
	}
	if first == n {
		return 0, 0, true
	}
	last = n - 1
	for d.digit(last) == '0' {
		last--
	}
	return first, last, false
}

// numbersEqual reports whether two valid JSON number literals have the
// same value, exactly: both are brought to the form ±0.d₁d₂…dₙ × 10^e with
// d₁ and dₙ nonzero, and the signs, digit strings and exponents compared.
func numbersEqual(a, b string) bool {
	if a == b {
		return true
	}
	x, y := splitNumber(a), splitNumber(b)
	xf, xl, xzero := x.significant()
	yf, yl, yzero := y.significant()
	if xzero || yzero {
		return xzero && yzero // -0 == 0
	}
	if x.neg != y.neg || xl-xf != yl-yf {
		return false
	}
	for i := 0; i <= xl-xf; i++ {
		if x.digit(xf+i) != y.digit(yf+i) {
			return false
		}
	}
	// The exponents of the normalised forms: exp + (digits before the point
	// that come after the leading zeros).
	return exponentsEqual(x.exp, len(x.intPart)-xf, y.exp, len(y.intPart)-yf)
}

// exponentsEqual reports whether ea+ka == eb+kb, where ea and eb are
// exponent texts of any length ("" is 0) and ka, kb are small.
func exponentsEqual(ea string, ka int, eb string, kb int) bool {
	a, aerr := strconv.ParseInt(orZero(ea), 10, 64)
	b, berr := strconv.ParseInt(orZero(eb), 10, 64)
	if aerr == nil && berr == nil && a < 1<<62 && a > -(1<<62) && b < 1<<62 && b > -(1<<62) {
		return a+int64(ka) == b+int64(kb)
	}
	// An exponent too long for int64: add the small k to its decimal text
	// digit by digit, in time linear in its length (math/big's decimal
	// conversion is quadratic: a million-digit exponent cost seconds).
	return addSmall(ea, ka) == addSmall(eb, kb)
}

// addSmall returns e+k as canonical decimal text ("-" and digits without
// leading zeros; "0" for zero), for an exponent text e of any length (an
// optional sign, digits) and a k that fits an int.
func addSmall(e string, k int) string {
	neg := strings.HasPrefix(e, "-")
	mag := strings.TrimLeft(strings.TrimLeft(e, "+-"), "0")
	kneg := k < 0
	if kneg {
		k = -k
	}
	kmag := strconv.Itoa(k)
	if kmag == "0" {
		kmag = ""
	}
	var out []byte
	switch {
	case mag == "":
		out, neg = []byte(kmag), kneg
	case neg == kneg:
		out = addDigits([]byte(mag), kmag)
	case len(mag) > len(kmag) || (len(mag) == len(kmag) && mag >= kmag):
		out = subDigits([]byte(mag), kmag) // opposite signs, |e| >= |k|: e's sign
	default:
		out, neg = subDigits([]byte(kmag), mag), kneg
	}
	text := strings.TrimLeft(string(out), "0")
	switch {
	case text == "":
		return "0"
	case neg:
		return "-" + text
	}
	return text
}

// addDigits returns the decimal digits of a+b.
func addDigits(a []byte, b string) []byte {
	out := make([]byte, max(len(a), len(b))+1)
	carry := byte(0)
	for i := 1; i <= len(out); i++ {
		d := carry
		if i <= len(a) {
			d += a[len(a)-i] - '0'
		}
		if i <= len(b) {
			d += b[len(b)-i] - '0'
		}
		out[len(out)-i], carry = '0'+d%10, d/10
	}
	return out
}

// subDigits returns the decimal digits of a-b, for a >= b.
func subDigits(a []byte, b string) []byte {
	out := append([]byte(nil), a...)
	borrow := 0
	for i := 1; i <= len(out); i++ {
		d := int(out[len(out)-i]-'0') - borrow
		if i <= len(b) {
			d -= int(b[len(b)-i] - '0')
		}
		borrow = 0
		if d < 0 {
			d, borrow = d+10, 1
		}
		out[len(out)-i] = byte('0' + d)
	}
	return out
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}
