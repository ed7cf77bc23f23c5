package schemas

import (
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hearth-mcp/hearth/pkg/jsondiff"
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
type fastSchema struct {
	always  *bool // a boolean schema
	ref     *fastSchema
	types   typeMask
	enum    []any
	cnst    *any
	not     *fastSchema
	allOf   []*fastSchema
	anyOf   []*fastSchema
	oneOf   []*fastSchema
	format  func(any) error
	minProp *int
	maxProp *int
	req     []string
	props   map[string]*fastSchema
	plist   []propEntry // the same properties, scanned instead of hashed when few
	trivial bool        // no constraint at all (annotations only): always valid
	// schemaDriven: object looks up lookups in the document (see planObject).
	schemaDriven bool
	lookups      []propEntry
	reqOther     []string // required names that are not properties (schema-driven)
	anyType      typeMask // anyOf branches that only check "type", merged
	pattern      []patternProp
	addl         *fastSchema // nil: any additional property is allowed
	addlNo       bool        // additionalProperties: false
	prefix       []*fastSchema
	items        *fastSchema
	minIt        *int
	maxIt        *int
	minLen       *int
	maxLen       *int
	re           jsonschema.Regexp
	min          *big.Rat
	max          *big.Rat
	exMin        *big.Rat
	exMax        *big.Rat
}

type propEntry struct {
	name string
	s    *fastSchema
	req  bool // required: its absence fails the object (schema-driven checks only)
}

// smallProps is the most properties looked up by scanning: comparing a few
// short strings is cheaper than hashing the key.
const smallProps = 12

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

// compileFast returns the fast checker of s, or nil when s (or any schema
// it reaches) uses a keyword the checker does not implement.
func compileFast(s *jsonschema.Schema) *fastSchema {
	memo := map[*jsonschema.Schema]*fastSchema{}
	ok := true
	var compile func(*jsonschema.Schema) *fastSchema
	list := func(ss []*jsonschema.Schema) []*fastSchema {
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
		f := &fastSchema{}
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
		f.minProp, f.maxProp, f.req = s.MinProperties, s.MaxProperties, s.Required
		if len(s.Properties) > 0 {
			f.props = make(map[string]*fastSchema, len(s.Properties))
			for k, v := range s.Properties {
				f.props[k] = compile(v)
			}
		}
		for re, v := range s.PatternProperties {
			f.pattern = append(f.pattern, patternProp{re, compile(v)})
		}
		switch a := s.AdditionalProperties.(type) {
		case nil:
		case bool:
			f.addlNo = !a
		case *jsonschema.Schema:
			f.addl = compile(a)
		default:
			ok = false
		}
		f.prefix, f.items = list(s.PrefixItems), compile(s.Items2020)
		f.minIt, f.maxIt, f.minLen, f.maxLen, f.re = s.MinItems, s.MaxItems, s.MinLength, s.MaxLength, s.Pattern
		f.min, f.max, f.exMin, f.exMax = s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum
		return f
	}
	f := compile(s)
	if !ok {
		return nil
	}
	for _, n := range memo {
		n.optimize()
	}
	for _, n := range memo {
		n.simplify()
	}
	for _, n := range memo {
		n.planObject()
	}
	return f
}

// alwaysValid: the node accepts every value.
func (f *fastSchema) alwaysValid() bool {
	return f != nil && (f.trivial || (f.always != nil && *f.always))
}

// simplify drops what cannot reject anything once every node is optimized:
// an additionalProperties that accepts everything, and an anyOf with a
// branch that does (Pydantic writes {"anyOf": [{}, {"type": "null"}]} for an
// optional field of any type).
func (f *fastSchema) simplify() {
	if f.addl.alwaysValid() {
		f.addl = nil
	}
	for _, b := range f.anyOf {
		if b.alwaysValid() {
			f.anyOf, f.anyType = nil, 0
			break
		}
	}
	f.trivial = f.isEmpty()
}

// planObject chooses how object checks its properties. Without pattern
// properties and with nothing to check on additional ones, the schema's
// properties are looked up in the document (one hash lookup each) rather than
// the document's keys matched against the schema: no map iteration, and the
// properties that accept anything are not even looked up unless
// additionalProperties is false (then every match is counted).
func (f *fastSchema) planObject() {
	f.schemaDriven = f.pattern == nil && f.addl == nil
	if !f.schemaDriven {
		return
	}
	names := make([]string, 0, len(f.props))
	for k := range f.props {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		req := slices.Contains(f.req, k)
		if f.addlNo || req || !f.props[k].alwaysValid() {
			f.lookups = append(f.lookups, propEntry{k, f.props[k], req})
		}
	}
	for _, k := range f.req {
		if _, ok := f.props[k]; !ok {
			f.reqOther = append(f.reqOther, k)
		}
	}
}

// optimize simplifies a compiled node once the whole graph exists: it
// follows references that add nothing, merges anyOf branches that only
// check a type into one mask, and marks nodes without constraints.
func (f *fastSchema) optimize() {
	follow := func(x *fastSchema) *fastSchema {
		for i := 0; i < 8 && x != nil && x.onlyRef(); i++ {
			x = x.ref
		}
		return x
	}
	f.ref, f.not, f.items, f.addl = follow(f.ref), follow(f.not), follow(f.items), follow(f.addl)
	for _, l := range [][]*fastSchema{f.allOf, f.anyOf, f.oneOf, f.prefix} {
		for i := range l {
			l[i] = follow(l[i])
		}
	}
	for k, v := range f.props {
		f.props[k] = follow(v)
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
			if len(rest) == 0 {
				f.anyOf = nil
				f.anyType = mask | anyTypeAlone
			}
		}
	}
	if len(f.props) <= smallProps {
		for k, v := range f.props {
			f.plist = append(f.plist, propEntry{name: k, s: v})
		}
	}
	f.trivial = f.always == nil && f.ref == nil && f.types == 0 && f.enum == nil && f.cnst == nil && f.not == nil &&
		f.allOf == nil && f.anyOf == nil && f.oneOf == nil && f.format == nil && f.minProp == nil && f.maxProp == nil &&
		f.req == nil && f.props == nil && f.pattern == nil && f.addl == nil && !f.addlNo && f.prefix == nil && f.items == nil &&
		f.minIt == nil && f.maxIt == nil && f.minLen == nil && f.maxLen == nil && f.re == nil &&
		f.min == nil && f.max == nil && f.exMin == nil && f.exMax == nil && f.anyType == 0
}

// anyTypeAlone marks an anyType mask that is the whole anyOf (no other
// branch to try).
const anyTypeAlone typeMask = 1 << 7

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
	return f.always == nil && f.ref == nil && f.types == 0 && f.enum == nil && f.cnst == nil && f.not == nil &&
		f.allOf == nil && f.anyOf == nil && f.oneOf == nil && f.format == nil && f.minProp == nil && f.maxProp == nil &&
		f.req == nil && f.props == nil && f.pattern == nil && f.addl == nil && !f.addlNo && f.prefix == nil && f.items == nil &&
		f.minIt == nil && f.maxIt == nil && f.minLen == nil && f.maxLen == nil && f.re == nil &&
		f.min == nil && f.max == nil && f.exMin == nil && f.exMax == nil && f.anyType == 0
}

// valid reports whether v (as decoded by jsonschema.UnmarshalJSON: maps,
// slices, json.Number, strings, bools, nil) satisfies the schema.
func (f *fastSchema) valid(v any) bool {
	if f.trivial {
		return true
	}
	if f.always != nil {
		return *f.always
	}
	if f.ref != nil && !f.ref.valid(v) {
		return false
	}
	if f.types != 0 && !hasType(f.types, v) {
		return false
	}
	if f.enum != nil && !containsEqual(f.enum, v) {
		return false
	}
	if f.cnst != nil && !jsondiff.Equal(*f.cnst, v) {
		return false
	}
	if f.not != nil && f.not.valid(v) {
		return false
	}
	for _, s := range f.allOf {
		if !s.valid(v) {
			return false
		}
	}
	if f.anyType != 0 {
		if f.anyType&anyTypeAlone != 0 {
			if !hasType(f.anyType&^anyTypeAlone, v) {
				return false
			}
		} else if !hasType(f.anyType, v) && !f.anyOfRest(v) {
			return false
		}
	} else if len(f.anyOf) > 0 && !f.anyOfRest(v) {
		return false
	}
	if len(f.oneOf) > 0 {
		n := 0
		for _, s := range f.oneOf {
			if s.valid(v) {
				if n++; n > 1 {
					return false
				}
			}
		}
		if n != 1 {
			return false
		}
	}
	if f.format != nil && f.format(v) != nil {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		return f.object(x)
	case []any:
		return f.array(x)
	case string:
		if f.minLen != nil || f.maxLen != nil {
			n := utf8.RuneCountInString(x)
			if (f.minLen != nil && n < *f.minLen) || (f.maxLen != nil && n > *f.maxLen) {
				return false
			}
		}
		if f.re != nil && !f.re.MatchString(x) {
			return false
		}
	case json.Number:
		if f.min != nil || f.max != nil || f.exMin != nil || f.exMax != nil {
			r, ok := new(big.Rat).SetString(string(x))
			if !ok {
				return false
			}
			if (f.min != nil && r.Cmp(f.min) < 0) || (f.max != nil && r.Cmp(f.max) > 0) ||
				(f.exMin != nil && r.Cmp(f.exMin) <= 0) || (f.exMax != nil && r.Cmp(f.exMax) >= 0) {
				return false
			}
		}
	}
	return true
}

func (f *fastSchema) anyOfRest(v any) bool {
	for _, s := range f.anyOf {
		if s.valid(v) {
			return true
		}
	}
	return false
}

func (f *fastSchema) prop(k string) (*fastSchema, bool) {
	if f.plist != nil || f.props == nil {
		for i := range f.plist {
			if e := &f.plist[i]; len(e.name) == len(k) && e.name == k {
				return e.s, true
			}
		}
		return nil, false
	}
	s, ok := f.props[k]
	return s, ok
}

func (f *fastSchema) object(m map[string]any) bool {
	if (f.minProp != nil && len(m) < *f.minProp) || (f.maxProp != nil && len(m) > *f.maxProp) {
		return false
	}
	if f.schemaDriven {
		// Required properties are checked by the same lookup as their schema.
		for _, k := range f.reqOther {
			if _, ok := m[k]; !ok {
				return false
			}
		}
		n := 0
		for i := range f.lookups {
			e := &f.lookups[i]
			v, ok := m[e.name]
			if !ok {
				if e.req {
					return false
				}
				continue
			}
			n++
			if !e.s.valid(v) {
				return false
			}
		}
		return !f.addlNo || n == len(m)
	}
	for _, k := range f.req {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	if f.props == nil && f.pattern == nil && f.addl == nil && !f.addlNo {
		return true
	}
	for k, v := range m {
		matched := false
		if s, ok := f.prop(k); ok {
			matched = true
			if !s.valid(v) {
				return false
			}
		}
		for _, p := range f.pattern {
			if p.re.MatchString(k) {
				matched = true
				if !p.s.valid(v) {
					return false
				}
			}
		}
		if !matched {
			if f.addlNo || (f.addl != nil && !f.addl.valid(v)) {
				return false
			}
		}
	}
	return true
}

func (f *fastSchema) array(a []any) bool {
	if (f.minIt != nil && len(a) < *f.minIt) || (f.maxIt != nil && len(a) > *f.maxIt) {
		return false
	}
	for i, v := range a {
		switch {
		case i < len(f.prefix):
			if !f.prefix[i].valid(v) {
				return false
			}
		case f.items != nil:
			if !f.items.valid(v) {
				return false
			}
		}
	}
	return true
}

// hasType checks "type"; a number's integer-ness is worked out only when
// the mask allows integers but not all numbers.
func hasType(mask typeMask, v any) bool {
	if n, ok := v.(json.Number); ok {
		if mask&tNumber != 0 {
			return true
		}
		return mask&tInteger != 0 && isInteger(string(n))
	}
	return mask&typeOf(v) != 0
}

func typeOf(v any) typeMask {
	switch x := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBool
	case string:
		return tString
	case []any:
		return tArray
	case map[string]any:
		return tObject
	case json.Number:
		if isInteger(string(x)) {
			return tNumber | tInteger
		}
		return tNumber
	case float64:
		if x == float64(int64(x)) {
			return tNumber | tInteger
		}
		return tNumber
	}
	return 0
}

// isInteger reports whether a JSON number has an integer value (1.0 and
// 1e2 are integers, as JSON Schema says).
func isInteger(s string) bool {
	if strings.ContainsAny(s, "eE") {
		r, ok := new(big.Rat).SetString(s)
		return ok && r.IsInt()
	}
	_, frac, _ := strings.Cut(s, ".")
	return strings.Trim(frac, "0") == ""
}

func containsEqual(list []any, v any) bool {
	for _, x := range list {
		if jsondiff.Equal(x, v) {
			return true
		}
	}
	return false
}
