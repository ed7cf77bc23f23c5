package tool

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/validate"
)

// The binder fills a Go value from decoded arguments (a jsonval document,
// decoded once with the frame) the way encoding/json would, with two
// differences that matter to a tool's clients:
//
//   - an integral number binds to an integer, however it is written: 50,
//     50.0, 5e1, 5.0e1 and 500e-1 are all 50 (JSON Schema calls them all
//     integers, so the input schema has let them through); a number whose
//     value does not fit the field is "number out of range" at its path.
//   - a value that does not fit is an INVALID_REQUEST naming the argument's
//     path in the contract's words ("must be a string"), never a Go type.
//
// Object members match a field by its json tag's name, else by the field's
// name, exactly or else case-insensitively, as encoding/json matches them;
// members that match no field are ignored (the input schema has refused
// unknown arguments already). null leaves a non-pointer field as it is and
// sets a pointer, map, slice or interface to nil. A type that implements
// json.Unmarshaler (or encoding.TextUnmarshaler, for a string) decodes its
// own text. Embedded struct fields are not bound.

// bindError is why a value did not bind, and where.
type bindError struct {
	path []string
	msg  string
}

// asToolError is the INVALID_REQUEST a failed bind of name's arguments
// becomes: the same shape as an argument the schema refused.
func (e *bindError) asToolError(name string) *Error {
	v := validate.Violation{Path: pointer(e.path), Msg: e.msg}
	return &Error{
		Code:    InvalidRequest,
		Message: "invalid arguments for " + name + ": " + v.String(),
		Fields:  map[string]any{"errors": []validate.Violation{v}},
	}
}

// bindArgs binds a document into target, a non-nil pointer.
func bindArgs(d *jsonval.Doc, target any) *bindError {
	v := reflect.ValueOf(target)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return &bindError{msg: "the arguments cannot be bound"}
	}
	b := binder{d: d}
	return b.value(d.Root(), v.Elem())
}

type binder struct {
	d    *jsonval.Doc
	path []string
}

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	numberType          = reflect.TypeFor[json.Number]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func (b *binder) fail(msg string) *bindError {
	return &bindError{path: append([]string(nil), b.path...), msg: msg}
}

// value binds node n into v, which is settable.
func (b *binder) value(n *jsonval.Node, v reflect.Value) *bindError {
	t := v.Type()
	if t == rawMessageType {
		v.SetBytes([]byte(b.text(n)))
		return nil
	}
	if n.Kind() == jsonval.Null {
		switch v.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
			v.SetZero()
		}
		return nil
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		return b.value(n, v.Elem())
	}
	if pt := reflect.PointerTo(t); pt.Implements(jsonUnmarshalerType) {
		if err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON([]byte(b.text(n))); err != nil {
			return b.fail("is not a valid value")
		}
		return nil
	} else if n.Kind() == jsonval.String && pt.Implements(textUnmarshalerType) {
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(b.d.Str(n))); err != nil {
			return b.fail("is not a valid value")
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Bool:
		if n.Kind() != jsonval.True && n.Kind() != jsonval.False {
			return b.fail("must be a boolean")
		}
		v.SetBool(n.Kind() == jsonval.True)
	case reflect.String:
		switch {
		case n.Kind() == jsonval.String:
			v.SetString(b.d.Str(n))
		case n.Kind() == jsonval.Number && t == numberType:
			v.SetString(b.d.Str(n))
		default:
			return b.fail("must be a string")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n.Kind() != jsonval.Number {
			return b.fail("must be an integer")
		}
		x, integral, fits := int64Of(b.d.Str(n))
		switch {
		case !integral:
			return b.fail("must be an integer")
		case !fits || v.OverflowInt(x):
			return b.fail("number out of range")
		}
		v.SetInt(x)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if n.Kind() != jsonval.Number {
			return b.fail("must be an integer")
		}
		neg, x, integral, fits := integerOf(b.d.Str(n))
		switch {
		case !integral:
			return b.fail("must be an integer")
		case !fits || neg || v.OverflowUint(x):
			return b.fail("number out of range")
		}
		v.SetUint(x)
	case reflect.Float32, reflect.Float64:
		if n.Kind() != jsonval.Number {
			return b.fail("must be a number")
		}
		f, err := strconv.ParseFloat(b.d.Str(n), t.Bits())
		if err != nil {
			return b.fail("number out of range")
		}
		v.SetFloat(f)
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return b.fail("cannot be bound")
		}
		x, err := b.any(n)
		if err != nil {
			return err
		}
		if x == nil {
			v.SetZero()
		} else {
			v.Set(reflect.ValueOf(x))
		}
	case reflect.Slice:
		if n.Kind() != jsonval.Array {
			return b.fail("must be an array")
		}
		s := reflect.MakeSlice(t, n.Len(), n.Len())
		if err := b.items(n, s); err != nil {
			return err
		}
		v.Set(s)
	case reflect.Array:
		if n.Kind() != jsonval.Array {
			return b.fail("must be an array")
		}
		v.SetZero()
		return b.items(n, v)
	case reflect.Map:
		if n.Kind() != jsonval.Object {
			return b.fail("must be an object")
		}
		if t.Key().Kind() != reflect.String {
			return b.fail("cannot be bound")
		}
		if v.IsNil() {
			v.Set(reflect.MakeMapWithSize(t, n.Len()))
		}
		it := b.d.Kids(n)
		for m := it.Next(); m != nil; m = it.Next() {
			key := b.d.Key(m)
			e := reflect.New(t.Elem()).Elem()
			b.path = append(b.path, key)
			err := b.value(m, e)
			b.path = b.path[:len(b.path)-1]
			if err != nil {
				return err
			}
			v.SetMapIndex(reflect.ValueOf(key).Convert(t.Key()), e)
		}
	case reflect.Struct:
		if n.Kind() != jsonval.Object {
			return b.fail("must be an object")
		}
		fields := fieldsOf(t)
		it := b.d.Kids(n)
		for m := it.Next(); m != nil; m = it.Next() {
			key := b.d.Key(m)
			f, ok := fields.find(key)
			if !ok {
				continue
			}
			b.path = append(b.path, key)
			err := b.value(m, v.Field(f.index))
			b.path = b.path[:len(b.path)-1]
			if err != nil {
				return err
			}
		}
	default:
		return b.fail("cannot be bound")
	}
	return nil
}

// items binds an array's items into a slice or array value of at least as
// many elements (an array's extra items are dropped, as encoding/json does).
func (b *binder) items(n *jsonval.Node, s reflect.Value) *bindError {
	it := b.d.Kids(n)
	for i, m := 0, it.Next(); m != nil && i < s.Len(); i, m = i+1, it.Next() {
		b.path = append(b.path, strconv.Itoa(i))
		err := b.value(m, s.Index(i))
		b.path = b.path[:len(b.path)-1]
		if err != nil {
			return err
		}
	}
	return nil
}

// any is n in the form encoding/json decodes into an interface: nil, bool,
// float64, string, []any or map[string]any.
func (b *binder) any(n *jsonval.Node) (any, *bindError) {
	switch n.Kind() {
	case jsonval.Null:
		return nil, nil
	case jsonval.False, jsonval.True:
		return n.Kind() == jsonval.True, nil
	case jsonval.Number:
		f, err := strconv.ParseFloat(b.d.Str(n), 64)
		if err != nil {
			return nil, b.fail("number out of range")
		}
		return f, nil
	case jsonval.String:
		return b.d.Str(n), nil
	case jsonval.Array:
		out := make([]any, 0, n.Len())
		it := b.d.Kids(n)
		for i, m := 0, it.Next(); m != nil; i, m = i+1, it.Next() {
			b.path = append(b.path, strconv.Itoa(i))
			x, err := b.any(m)
			b.path = b.path[:len(b.path)-1]
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	}
	out := make(map[string]any, n.Len())
	it := b.d.Kids(n)
	for m := it.Next(); m != nil; m = it.Next() {
		b.path = append(b.path, b.d.Key(m))
		x, err := b.any(m)
		b.path = b.path[:len(b.path)-1]
		if err != nil {
			return nil, err
		}
		out[b.d.Key(m)] = x
	}
	return out, nil
}

// text is n's JSON text: as the client wrote it when the document kept its
// source, else encoded again (same value; object keys sorted).
func (b *binder) text(n *jsonval.Node) string {
	if raw, ok := b.d.Raw(n); ok {
		return raw
	}
	out, err := json.Marshal(b.d.AnyOf(n))
	if err != nil {
		return "null" // unreachable: a decoded document always encodes
	}
	return string(out)
}

// field is one bindable struct field.
type field struct {
	name      string // the member it binds: the json tag's name, else the Go name
	index     int
	omitEmpty bool
	goName    string
}

type fieldList []field

// find is the field a member key binds: the exact name, else the first
// case-insensitive match, as encoding/json chooses.
func (fs fieldList) find(key string) (field, bool) {
	for _, f := range fs {
		if f.name == key {
			return f, true
		}
	}
	for _, f := range fs {
		if strings.EqualFold(f.name, key) {
			return f, true
		}
	}
	return field{}, false
}

var fieldCache sync.Map // reflect.Type -> fieldList

// fieldsOf lists a struct type's bindable fields: exported, not embedded,
// not tagged "-".
func fieldsOf(t reflect.Type) fieldList {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(fieldList)
	}
	var fs fieldList
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() || sf.Anonymous {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		fs = append(fs, field{name: name, index: i, goName: sf.Name, omitEmpty: hasOption(opts, "omitempty") || hasOption(opts, "omitzero")})
	}
	fieldCache.Store(t, fs)
	return fs
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// pointer builds an RFC 6901 JSON Pointer from reference tokens.
func pointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return sb.String()
}

// timeoutOf is a timeout argument's value, milliseconds however written:
// ok false when it is not a positive integer. One past what a Duration
// holds is the largest Duration.
func timeoutOf(lit string) (d time.Duration, ok bool) {
	neg, ms, integral, fits := integerOf(lit)
	switch {
	case !integral || neg || (fits && ms == 0):
		return 0, false
	case !fits || ms > math.MaxInt64/uint64(time.Millisecond):
		return math.MaxInt64, true
	}
	return time.Duration(ms) * time.Millisecond, true
}
