package validate

import (
	"math/big"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// fastSchema decides validity quickly for schemas that use only common
// keywords. The full validator (santhosh-tekuri/jsonschema) builds an error
// tree and annotations for every call, which dominates the cost of
// validating a valid document; most documents are valid. So a schema whose
// every reachable keyword is one fastSchema implements exactly gets a
// compiled checker that answers true or false without allocating, and only
// a document it finds invalid goes through the full validator, for the
// error list. A schema using anything else (unevaluated*, $dynamicRef,
// if/then/else, dependencies, contains, uniqueItems, multipleOf, content
// assertions, extensions) is not compiled: the full validator answers.
//
// It reads jsonval documents: an object's members are contiguous nodes, and
// each object node matches member keys to its properties with a perfect
// hash chosen at compile time, so no key is ever hashed in full.
//
// A true answer must imply the full validator's; a false one only sends the
// document to the full validator. That is what makes duplicate keys safe:
// every occurrence is checked (stricter than encoding/json's last-wins), and
// minProperties, the one count a duplicate could inflate, counts distinct keys.
type fastSchema struct {
	// Read for every value, so first and small.
	trivial bool     // no constraint at all (annotations only): always valid
	rare    bool     // one of the rare checks below is set
	types   typeMask // "type"; 0: any
	anyType typeMask // anyOf branches that only check "type", merged
	ref     *fastSchema
	anyOf   []*fastSchema // the other anyOf branches
	obj     *objectCheck
	arr     *arrayCheck
	str     *stringCheck
	num     *numberCheck

	// Rare keywords.
	always  *bool // a boolean schema
	enum    []any
	enumStr []string // the enum when all of it is strings
	cnst    *any
	not     *fastSchema
	allOf   []*fastSchema
	oneOf   []*fastSchema
	format  func(any) error

	kw *keywords // as compiled; finish builds the checks from it and drops it
}

// keywords are a schema's per-type keywords, as compiled.
type keywords struct {
	minProp, maxProp             *int
	req                          []string
	props                        map[string]*fastSchema
	pattern                      []patternProp
	addl                         *fastSchema // nil: any additional property is allowed
	addlNo                       bool        // additionalProperties: false
	prefix                       []*fastSchema
	items                        *fastSchema
	minIt, maxIt, minLen, maxLen *int
	re                           jsonschema.Regexp
	min, max, exMin, exMax       *big.Rat
}

type patternProp struct {
	re jsonschema.Regexp
	s  *fastSchema
}

type typeMask uint8

const (
	tNull typeMask = 1 << iota
	tBool
	tNumber
	tInteger
	tString
	tArray
	tObject
)

var typeNames = map[string]typeMask{"null": tNull, "boolean": tBool, "number": tNumber, "integer": tInteger,
	"string": tString, "array": tArray, "object": tObject}

// kindType is the type mask each kind satisfies ("integer" needs a look at
// the number).
var kindType = [...]typeMask{jsonval.Null: tNull, jsonval.False: tBool, jsonval.True: tBool,
	jsonval.Number: tNumber, jsonval.String: tString, jsonval.Array: tArray, jsonval.Object: tObject}

// compileFast returns the fast checker of s, or nil when s (or any schema
// it reaches) uses a keyword the checker does not implement.
func compileFast(s *jsonschema.Schema) *fastSchema {
	memo := map[*jsonschema.Schema]*fastSchema{}
	ok := true
	var compile func(*jsonschema.Schema) *fastSchema
	list := func(ss []*jsonschema.Schema) []*fastSchema {
		if ss == nil {
			return nil
		}
		out := make([]*fastSchema, len(ss))
		for i, x := range ss {
			out[i] = compile(x)
		}
		return out
	}
	compile = func(s *jsonschema.Schema) *fastSchema {
		if s == nil {
			return nil
		}
		if f, seen := memo[s]; seen {
			return f // a cycle through $ref: the node is being filled in
		}
		f := &fastSchema{kw: &keywords{}}
		memo[s] = f
		if s.Bool != nil {
			f.always = s.Bool
			return f
		}
		if s.RecursiveRef != nil || s.DynamicRef != nil || s.If != nil || s.Then != nil || s.Else != nil ||
			s.PropertyNames != nil || len(s.Dependencies) > 0 || len(s.DependentRequired) > 0 || len(s.DependentSchemas) > 0 ||
			s.UnevaluatedProperties != nil || s.UnevaluatedItems != nil || s.Contains != nil || s.MinContains != nil || s.MaxContains != nil ||
			s.UniqueItems || s.Items != nil || s.AdditionalItems != nil || s.MultipleOf != nil ||
			s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil || len(s.Extensions) > 0 {
			ok = false
			return f
		}
		f.ref = compile(s.Ref)
		if s.Types != nil {
			for _, n := range s.Types.ToStrings() {
				f.types |= typeNames[n]
			}
		}
		if s.Enum != nil {
			f.enum = s.Enum.Values
		}
		f.cnst = s.Const
		f.not = compile(s.Not)
		f.allOf, f.anyOf, f.oneOf = list(s.AllOf), list(s.AnyOf), list(s.OneOf)
		if s.Format != nil {
			f.format = s.Format.Validate
		}
		k := f.kw
		k.minProp, k.maxProp, k.req = s.MinProperties, s.MaxProperties, s.Required
		if len(s.Properties) > 0 {
			k.props = make(map[string]*fastSchema, len(s.Properties))
			for name, v := range s.Properties {
				k.props[name] = compile(v)
			}
		}
		for re, v := range s.PatternProperties {
			k.pattern = append(k.pattern, patternProp{re, compile(v)})
		}
		switch a := s.AdditionalProperties.(type) {
		case nil:
		case bool:
			k.addlNo = !a
		case *jsonschema.Schema:
			k.addl = compile(a)
		default:
			ok = false
		}
		k.prefix, k.items = list(s.PrefixItems), compile(s.Items2020)
		k.minIt, k.maxIt, k.minLen, k.maxLen, k.re = s.MinItems, s.MaxItems, s.MinLength, s.MaxLength, s.Pattern
		k.min, k.max, k.exMin, k.exMax = s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum
		return f
	}
	f := compile(s)
	if !ok {
		return nil
	}
	for _, n := range memo {
		n.optimize()
	}
	// Dropping what accepts everything can make a parent accept everything
	// too: repeat until nothing changes.
	for changed := true; changed; {
		changed = false
		for _, n := range memo {
			changed = n.simplify() || changed
		}
	}
	for _, n := range memo {
		n.finish()
	}
	for _, n := range memo {
		n.kw = nil // every node is finished: nothing reads the keywords again
	}
	return f
}

// alwaysValid: the node accepts every value.
func (f *fastSchema) alwaysValid() bool {
	return f != nil && (f.trivial || (f.always != nil && *f.always))
}

// optimize follows references that add nothing and merges anyOf branches
// that only check a type into one mask.
func (f *fastSchema) optimize() {
	follow := func(x *fastSchema) *fastSchema {
		for i := 0; i < 8 && x != nil && x.onlyRef(); i++ {
			x = x.ref
		}
		return x
	}
	k := f.kw
	f.ref, f.not, k.items, k.addl = follow(f.ref), follow(f.not), follow(k.items), follow(k.addl)
	for _, l := range [][]*fastSchema{f.allOf, f.anyOf, f.oneOf, k.prefix} {
		for i := range l {
			l[i] = follow(l[i])
		}
	}
	for name, v := range k.props {
		k.props[name] = follow(v)
	}
	for i := range k.pattern {
		k.pattern[i].s = follow(k.pattern[i].s)
	}
	if len(f.anyOf) > 0 {
		var rest []*fastSchema
		var mask typeMask
		for _, b := range f.anyOf {
			if b.onlyTypes() {
				mask |= b.types
			} else {
				rest = append(rest, b)
			}
		}
		if mask != 0 {
			// anyOf holds when the type is one of the mask's or another
			// branch holds: the mask is tried first, then the rest.
			f.anyType, f.anyOf = mask, rest
		}
	}
	f.trivial = f.isEmpty()
}

// simplify drops what cannot reject anything: an additionalProperties, a
// $ref or an allOf member that accepts everything, and an anyOf with a
// branch that does (Pydantic writes {"anyOf": [{}, {"type": "null"}]} for
// an optional field of any type). It reports whether anything changed.
func (f *fastSchema) simplify() bool {
	k, was := f.kw, f.trivial
	changed := false
	if k.addl.alwaysValid() {
		k.addl, changed = nil, true
	}
	if f.ref.alwaysValid() {
		f.ref, changed = nil, true
	}
	if n := len(f.allOf); n > 0 {
		f.allOf = slices.DeleteFunc(f.allOf, (*fastSchema).alwaysValid)
		if len(f.allOf) == 0 {
			f.allOf = nil
		}
		changed = changed || len(f.allOf) != n
	}
	for _, b := range f.anyOf {
		if b.alwaysValid() {
			f.anyOf, f.anyType, changed = nil, 0, true
			break
		}
	}
	f.trivial = f.isEmpty()
	return changed || f.trivial != was
}

func (f *fastSchema) onlyRef() bool {
	g := *f
	g.ref = nil
	return f.ref != nil && g.isEmpty()
}

func (f *fastSchema) onlyTypes() bool {
	g := *f
	g.types = 0
	return f.types != 0 && g.isEmpty()
}

func (f *fastSchema) isEmpty() bool {
	k := f.kw
	return f.always == nil && f.ref == nil && f.types == 0 && f.enum == nil && f.cnst == nil && f.not == nil &&
		f.allOf == nil && f.anyOf == nil && f.oneOf == nil && f.format == nil && f.anyType == 0 &&
		k.minProp == nil && k.maxProp == nil && k.req == nil && k.props == nil && k.pattern == nil && k.addl == nil &&
		!k.addlNo && k.prefix == nil && k.items == nil && k.minIt == nil && k.maxIt == nil && k.minLen == nil &&
		k.maxLen == nil && k.re == nil && k.min == nil && k.max == nil && k.exMin == nil && k.exMax == nil
}

// finish builds the per-type checks from the compiled keywords.
func (f *fastSchema) finish() {
	k := f.kw
	if len(f.enum) > 0 {
		strs := make([]string, 0, len(f.enum))
		for _, e := range f.enum {
			if s, ok := e.(string); ok {
				strs = append(strs, s)
			}
		}
		if len(strs) == len(f.enum) {
			f.enumStr = strs
		}
	}
	f.rare = f.always != nil || f.enum != nil || f.cnst != nil || f.not != nil || f.allOf != nil || f.oneOf != nil || f.format != nil
	f.obj = newObjectCheck(k)
	if k.minIt != nil || k.maxIt != nil || len(k.prefix) > 0 || (k.items != nil && !k.items.alwaysValid()) {
		f.arr = &arrayCheck{minIt: intOr(k.minIt, -1), maxIt: intOr(k.maxIt, -1), prefix: k.prefix, items: k.items}
		if f.arr.items.alwaysValid() {
			f.arr.items = nil
		}
	}
	if k.minLen != nil || k.maxLen != nil || k.re != nil {
		f.str = &stringCheck{minLen: intOr(k.minLen, -1), maxLen: intOr(k.maxLen, -1), re: k.re}
	}
	if k.min != nil || k.max != nil || k.exMin != nil || k.exMax != nil {
		f.num = &numberCheck{}
		for _, b := range []struct {
			r         *big.Rat
			exclusive bool
			upper     bool
		}{{k.min, false, false}, {k.max, false, true}, {k.exMin, true, false}, {k.exMax, true, true}} {
			if b.r != nil {
				fl, exact := b.r.Float64()
				f.num.bounds = append(f.num.bounds, bound{r: b.r, f: fl, exact: exact, exclusive: b.exclusive, upper: b.upper})
			}
		}
	}
}

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// valid reports whether node v of document d satisfies the schema.
func (f *fastSchema) valid(d *jsonval.Doc, v *jsonval.Node) bool {
	if f.trivial {
		return true
	}
	if f.types != 0 && !hasType(f.types, d, v) {
		return false
	}
	if f.ref != nil && !f.ref.valid(d, v) {
		return false
	}
	if (f.anyType != 0 || f.anyOf != nil) && !f.anyOfValid(d, v) {
		return false
	}
	if f.rare && !f.rareValid(d, v) {
		return false
	}
	switch v.Kind() {
	case jsonval.Object:
		return f.obj == nil || f.obj.valid(d, v)
	case jsonval.Array:
		return f.arr == nil || f.arr.valid(d, v)
	case jsonval.String:
		return f.str == nil || f.str.valid(d.Str(v))
	case jsonval.Number:
		return f.num == nil || f.num.valid(d.Str(v))
	}
	return true
}

func (f *fastSchema) anyOfValid(d *jsonval.Doc, v *jsonval.Node) bool {
	if f.anyType != 0 && hasType(f.anyType, d, v) {
		return true
	}
	for _, s := range f.anyOf {
		if s.valid(d, v) {
			return true
		}
	}
	return false
}

func (f *fastSchema) rareValid(d *jsonval.Doc, v *jsonval.Node) bool {
	if f.always != nil {
		return *f.always
	}
	if f.enumStr != nil {
		if v.Kind() != jsonval.String || !slices.Contains(f.enumStr, d.Str(v)) {
			return false
		}
	} else if f.enum != nil && (holdsLongNumber(d, v) || !containsEqual(f.enum, d.AnyOf(v))) {
		return false
	}
	if f.cnst != nil && (holdsLongNumber(d, v) || !jsonval.EqualAny(*f.cnst, d.AnyOf(v))) {
		return false
	}
	if f.not != nil && f.not.valid(d, v) {
		return false
	}
	for _, s := range f.allOf {
		if !s.valid(d, v) {
			return false
		}
	}
	if len(f.oneOf) > 0 {
		n := 0
		for _, s := range f.oneOf {
			if s.valid(d, v) {
				if n++; n > 1 {
					return false
				}
			}
		}
		if n != 1 {
			return false
		}
	}
	return f.format == nil || f.format(d.AnyOf(v)) == nil
}

// objectCheck is an object node's properties, required names, counts and
// additional-property rule.
type objectCheck struct {
	props    keyIndex // the properties whose match matters
	reqMask  uint64   // bits of the required properties in props
	reqOther []string // required names that are not in props (or past 64)
	pattern  []patternProp
	addl     *fastSchema // checks unmatched members; nil accepts them
	addlNo   bool        // unmatched members fail
	minProp  int         // -1: none
	maxProp  int         // -1: none
}

func newObjectCheck(k *keywords) *objectCheck {
	o := &objectCheck{pattern: k.pattern, addl: k.addl, addlNo: k.addlNo, minProp: intOr(k.minProp, -1), maxProp: intOr(k.maxProp, -1)}
	// A property that accepts anything and is not required only needs
	// matching when an unmatched member would be checked.
	matchAll := o.addlNo || o.addl != nil || o.pattern != nil
	var names []string
	for name, s := range k.props {
		if matchAll || !s.alwaysValid() || slices.Contains(k.req, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	entries := make([]propEntry, len(names))
	nreq := 0
	for i, name := range names {
		entries[i] = propEntry{name: name, s: k.props[name]}
		if slices.Contains(k.req, name) && nreq < 64 {
			entries[i].bit = 1 << nreq
			nreq++
		}
	}
	o.reqMask = 1<<nreq - 1
	for _, name := range k.req {
		if i, found := slices.BinarySearch(names, name); !found || entries[i].bit == 0 {
			if !slices.Contains(o.reqOther, name) {
				o.reqOther = append(o.reqOther, name)
			}
		}
	}
	o.props = newKeyIndex(entries)
	if len(entries) == 0 && o.reqOther == nil && o.pattern == nil && o.addl == nil && !o.addlNo && o.minProp < 0 && o.maxProp < 0 {
		return nil
	}
	return o
}

func (o *objectCheck) valid(d *jsonval.Doc, v *jsonval.Node) bool {
	if o.maxProp >= 0 && v.Len() > o.maxProp {
		return false
	}
	if o.minProp >= 0 && (v.Len() < o.minProp || distinctKeys(d, v) < o.minProp) {
		return false
	}
	var seen uint64
	it := d.Kids(v)
	for m := it.Next(); m != nil; m = it.Next() {
		key := d.Key(m)
		matched := false
		if p := o.props.find(key); p != nil {
			seen |= p.bit
			if !p.s.trivial && !p.s.valid(d, m) {
				return false
			}
			matched = true
		}
		for _, pp := range o.pattern {
			if pp.re.MatchString(key) {
				matched = true
				if !pp.s.valid(d, m) {
					return false
				}
			}
		}
		if !matched {
			if o.addlNo || (o.addl != nil && !o.addl.valid(d, m)) {
				return false
			}
		}
	}
	if seen&o.reqMask != o.reqMask {
		return false
	}
	for _, name := range o.reqOther {
		if d.Get(v, name) == nil {
			return false
		}
	}
	return true
}

// distinctKeys counts an object's keys as encoding/json would keep them.
func distinctKeys(d *jsonval.Doc, v *jsonval.Node) int {
	keys := make([]string, 0, v.Len())
	it := d.Kids(v)
	for m := it.Next(); m != nil; m = it.Next() {
		if k := d.Key(m); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return len(keys)
}

type propEntry struct {
	name string
	s    *fastSchema
	bit  uint64 // this property's bit in reqMask, 0 if not required
}

// keyIndex finds a property by member key with a perfect hash of the key's
// length and three of its bytes, chosen at compile time so that no two
// properties share a slot: one multiply, one load, and a string compare only
// when the signatures agree. Properties that no such hash separates (same
// length and same bytes at those places) use a map instead.
type keyIndex struct {
	table  []slot // 1<<(32-shift) slots
	mul    uint32
	shift  uint8
	byName map[string]*propEntry // the fallback
}

type slot struct {
	sig  uint32
	name string     // the entry's name, here to spare a dependent load
	e    *propEntry // nil: empty
}

func keySig(k string) uint32 {
	n := len(k)
	if n == 0 {
		return 0
	}
	return uint32(n) | uint32(k[0])<<8 | uint32(k[n-1])<<16 | uint32(k[n/2])<<24
}

func newKeyIndex(entries []propEntry) keyIndex {
	var x keyIndex
	if len(entries) == 0 {
		return x
	}
	bits := 1
	for 1<<bits < 2*len(entries) {
		bits++
	}
	// A fixed seed keeps compilation deterministic.
	state := uint32(2654435769)
	for try := 0; try < 400 && bits <= 16; try++ {
		if try > 0 && try%100 == 0 {
			bits++ // a sparser table is easier to place perfectly
		}
		state = state*1664525 + 1013904223
		mul := state | 1
		shift := uint8(32 - bits)
		table := make([]slot, 1<<bits)
		perfect := true
		for i := range entries {
			sig := keySig(entries[i].name)
			h := (sig * mul) >> shift
			if table[h].e != nil {
				perfect = false
				break
			}
			table[h] = slot{sig, entries[i].name, &entries[i]}
		}
		if perfect {
			x.table, x.mul, x.shift = table, mul, shift
			return x
		}
	}
	x.byName = make(map[string]*propEntry, len(entries))
	for i := range entries {
		x.byName[entries[i].name] = &entries[i]
	}
	return x
}

func (x *keyIndex) find(k string) *propEntry {
	if x.table != nil {
		// An empty slot holds no entry, so matching one gives nil too.
		sig := keySig(k)
		if sl := &x.table[(sig*x.mul)>>x.shift]; sl.sig == sig && sl.name == k {
			return sl.e
		}
		return nil
	}
	return x.byName[k] // nil map: no properties
}

type arrayCheck struct {
	minIt, maxIt int // -1: none
	prefix       []*fastSchema
	items        *fastSchema // nil: items after the prefix are not checked
}

func (a *arrayCheck) valid(d *jsonval.Doc, v *jsonval.Node) bool {
	if n := v.Len(); (a.minIt >= 0 && n < a.minIt) || (a.maxIt >= 0 && n > a.maxIt) {
		return false
	}
	it := d.Kids(v)
	for i, m := 0, it.Next(); m != nil; i, m = i+1, it.Next() {
		if i < len(a.prefix) {
			if !a.prefix[i].valid(d, m) {
				return false
			}
		} else if a.items == nil {
			break
		} else if !a.items.valid(d, m) {
			return false
		}
	}
	return true
}

type stringCheck struct {
	minLen, maxLen int // in characters; -1: none
	re             jsonschema.Regexp
}

func (c *stringCheck) valid(s string) bool {
	if c.minLen >= 0 || c.maxLen >= 0 {
		// A string has at most one character per byte: short strings fail
		// minLength and short enough ones pass maxLength without counting.
		n := len(s)
		if n < c.minLen {
			return false
		}
		if (c.minLen > 0 && n < 4*c.minLen) || (c.maxLen >= 0 && n > c.maxLen) {
			n = utf8.RuneCountInString(s)
			if (c.minLen >= 0 && n < c.minLen) || (c.maxLen >= 0 && n > c.maxLen) {
				return false
			}
		}
	}
	return c.re == nil || c.re.MatchString(s)
}

type numberCheck struct{ bounds []bound }

// bound is one of minimum, maximum, exclusiveMinimum, exclusiveMaximum. A
// number is compared as a float64 first: parsing rounds monotonically, so
// when the bound is exactly a float64 a float that differs from it decides;
// only an equal float (or an inexact bound) needs the exact rational.
type bound struct {
	r         *big.Rat
	f         float64
	exact     bool
	exclusive bool
	upper     bool
}

func (c *numberCheck) valid(lit string) bool {
	fv, _ := strconv.ParseFloat(lit, 64) // a range error still rounds monotonically (to ±Inf or 0)
	var r *big.Rat
	for _, b := range c.bounds {
		cmp := 0
		switch {
		case b.exact && fv < b.f:
			cmp = -1
		case b.exact && fv > b.f:
			cmp = 1
		default:
			if r == nil {
				// A number too long to convert is left to the full
				// validator, which answers it without converting it.
				if readNumber(lit).tooLong() {
					return false
				}
				var ok bool
				if r, ok = new(big.Rat).SetString(lit); !ok {
					return false
				}
			}
			cmp = r.Cmp(b.r)
		}
		if b.upper {
			cmp = -cmp
		}
		// Now cmp < 0 means the number is on the wrong side of the bound.
		if cmp < 0 || (cmp == 0 && b.exclusive) {
			return false
		}
	}
	return true
}

// hasType checks "type"; a number's integer-ness is worked out only when
// the mask allows integers but not all numbers.
func hasType(mask typeMask, d *jsonval.Doc, v *jsonval.Node) bool {
	if kindType[v.Kind()]&mask != 0 {
		return true
	}
	return v.Kind() == jsonval.Number && mask&tInteger != 0 && isInteger(d, v)
}

// isInteger reports whether a JSON number has an integer value (1.0 and
// 1e2 are integers, as JSON Schema says), from its text alone. A number
// math/big cannot parse is not one, as the full validator finds.
func isInteger(d *jsonval.Doc, v *jsonval.Node) bool {
	if v.IsPlainInt() {
		return true
	}
	n := readNumber(d.Str(v))
	return n.integer() && !n.unparsable()
}

// holdsLongNumber reports whether v is or holds a number too long to
// compare exactly: enum and const leave it to the full validator, which
// answers it without comparing it.
func holdsLongNumber(d *jsonval.Doc, v *jsonval.Node) bool {
	if v.Kind() < jsonval.Number || v.Kind() == jsonval.String {
		return false
	}
	_, found := findNumber(d, v, nil, number.tooLong)
	return found
}

func containsEqual(list []any, v any) bool {
	for _, x := range list {
		if jsonval.EqualAny(x, v) {
			return true
		}
	}
	return false
}
