package jsonval

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting accepted, encoding/json's own limit.
const MaxDepth = 10000

// SyntaxError says what is wrong with the input and where.
type SyntaxError struct {
	Msg    string
	Offset int // byte offset of the problem
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.Msg, e.Offset) }

// Parse decodes one JSON value that fills data (surrounding whitespace
// allowed). data is copied once; the result's strings share that copy.
func Parse(data []byte) (Value, error) { return ParseString(string(data)) }

// ParseString is Parse for a string; the result's strings share s.
func ParseString(s string) (Value, error) {
	d := decoder{s: s}
	// One arena chunk usually holds a whole document: JSON spends at least
	// a few bytes on every value.
	d.arena = make([]Member, 0, min(max(16, len(s)/24), 1<<16))
	d.space()
	if d.i == len(s) {
		return Value{}, &SyntaxError{"unexpected end of JSON input", d.i}
	}
	v, err := d.value()
	if err != nil {
		return Value{}, err
	}
	d.space()
	if d.i != len(s) {
		return Value{}, d.unexpected("after top-level value")
	}
	return v, nil
}

type decoder struct {
	s     string
	i     int
	depth int
	stack []Member // children of the containers still being decoded
	arena []Member // room for finished containers' children
	buf   []byte   // a string being unescaped
}

func (d *decoder) unexpected(where string) error {
	if d.i >= len(d.s) {
		return &SyntaxError{"unexpected end of JSON input", d.i}
	}
	return &SyntaxError{fmt.Sprintf("invalid character %q %s", d.s[d.i], where), d.i}
}

func (d *decoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) value() (Value, error) {
	if d.i >= len(d.s) {
		return Value{}, d.unexpected("")
	}
	switch c := d.s[d.i]; c {
	case '{':
		return d.container(Object, '}')
	case '[':
		return d.container(Array, ']')
	case '"':
		s, err := d.str()
		return Value{Kind: String, Str: s}, err
	case 't':
		return d.literal("true", Value{Kind: True})
	case 'f':
		return d.literal("false", Value{Kind: False})
	case 'n':
		return d.literal("null", Value{Kind: Null})
	default:
		if c == '-' || ('0' <= c && c <= '9') {
			return d.number()
		}
		return Value{}, d.unexpected("looking for beginning of value")
	}
}

func (d *decoder) literal(word string, v Value) (Value, error) {
	if len(d.s)-d.i >= len(word) && d.s[d.i:d.i+len(word)] == word {
		d.i += len(word)
		return v, nil
	}
	for j := 0; j < len(word); j++ { // point at the first wrong byte
		if d.i >= len(d.s) || d.s[d.i] != word[j] {
			return Value{}, d.unexpected("in literal " + word)
		}
		d.i++
	}
	return v, nil
}

// container decodes an object or array; its children collect on d.stack
// and move to the arena when it ends, so each container costs no
// allocation of its own.
func (d *decoder) container(kind Kind, end byte) (Value, error) {
	d.i++
	if d.depth++; d.depth > MaxDepth {
		return Value{}, &SyntaxError{"exceeded max depth", d.i - 1}
	}
	base := len(d.stack)
	d.space()
	if d.i < len(d.s) && d.s[d.i] == end {
		d.i++
		d.depth--
		return Value{Kind: kind}, nil
	}
	for {
		var key string
		if kind == Object {
			if d.i >= len(d.s) || d.s[d.i] != '"' {
				return Value{}, d.unexpected("looking for beginning of object key string")
			}
			k, err := d.str()
			if err != nil {
				return Value{}, err
			}
			key = k
			d.space()
			if d.i >= len(d.s) || d.s[d.i] != ':' {
				return Value{}, d.unexpected("after object key")
			}
			d.i++
			d.space()
		}
		v, err := d.value()
		if err != nil {
			return Value{}, err
		}
		d.stack = append(d.stack, Member{Key: key, Value: v})
		d.space()
		if d.i < len(d.s) && d.s[d.i] == ',' {
			d.i++
			d.space()
			continue
		}
		if d.i < len(d.s) && d.s[d.i] == end {
			d.i++
			break
		}
		if kind == Object {
			return Value{}, d.unexpected("after object key:value pair")
		}
		return Value{}, d.unexpected("after array element")
	}
	d.depth--
	n := len(d.stack) - base
	if cap(d.arena)-len(d.arena) < n {
		d.arena = make([]Member, 0, max(n, min(2*cap(d.arena), 1<<16)))
	}
	at := len(d.arena)
	d.arena = append(d.arena, d.stack[base:]...)
	clear(d.stack[base:]) // drop references the stack no longer needs
	d.stack = d.stack[:base]
	return Value{Kind: kind, Kids: d.arena[at : at+n : at+n]}, nil
}

// number scans RFC 8259's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *decoder) number() (Value, error) {
	start := d.i
	if d.s[d.i] == '-' {
		d.i++
	}
	digits := func() bool {
		j := d.i
		for d.i < len(d.s) && '0' <= d.s[d.i] && d.s[d.i] <= '9' {
			d.i++
		}
		return d.i > j
	}
	switch {
	case d.i < len(d.s) && d.s[d.i] == '0':
		d.i++
	case !digits():
		return Value{}, d.unexpected("in numeric literal")
	}
	plain := true
	if d.i < len(d.s) && d.s[d.i] == '.' {
		plain = false
		d.i++
		if !digits() {
			return Value{}, d.unexpected("after decimal point in numeric literal")
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		plain = false
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if !digits() {
			return Value{}, d.unexpected("in exponent of numeric literal")
		}
	}
	return Value{Kind: Number, plainInt: plain, Str: d.s[start:d.i]}, nil
}

// strPlain marks the bytes a string can hold as they are: not '"', '\\',
// a control character, or the start of a multi-byte sequence.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str decodes a string at d.i (its opening quote). Without escapes and
// with valid UTF-8 it is a substring of the input.
func (d *decoder) str() (string, error) {
	start := d.i + 1
	j := start
	for j < len(d.s) && strPlain[d.s[j]] {
		j++
	}
	if j < len(d.s) && d.s[j] == '"' {
		d.i = j + 1
		return d.s[start:j], nil
	}
	return d.strSlow(start)
}

// strSlow decodes a string with escapes or non-ASCII bytes as
// encoding/json does: invalid UTF-8 bytes and unpaired surrogates become
// U+FFFD, control characters are errors.
func (d *decoder) strSlow(start int) (string, error) {
	b := d.buf[:0]
	clean := true // nothing changed: the input substring is the value
	i := start
	for {
		if i >= len(d.s) {
			d.i = i
			return "", &SyntaxError{"unexpected end of JSON input", i}
		}
		c := d.s[i]
		switch {
		case c == '"':
			d.i = i + 1
			if clean {
				d.buf = b
				return d.s[start:i], nil
			}
			d.buf = b
			return string(b), nil
		case c < 0x20:
			d.i = i
			return "", d.unexpected("in string literal")
		case c == '\\':
			if clean {
				b, clean = append(b, d.s[start:i]...), false
			}
			i++
			if i >= len(d.s) {
				d.i = i
				return "", &SyntaxError{"unexpected end of JSON input", i}
			}
			switch e := d.s[i]; e {
			case '"', '\\', '/':
				b = append(b, e)
				i++
			case 'b':
				b, i = append(b, '\b'), i+1
			case 'f':
				b, i = append(b, '\f'), i+1
			case 'n':
				b, i = append(b, '\n'), i+1
			case 'r':
				b, i = append(b, '\r'), i+1
			case 't':
				b, i = append(b, '\t'), i+1
			case 'u':
				r, ok := hex4(d.s, i+1)
				if !ok {
					d.i = i + 1
					for k := 0; k < 4 && d.i < len(d.s) && isHex(d.s[d.i]); k++ {
						d.i++
					}
					return "", d.unexpected("in \\u hexadecimal character escape")
				}
				i += 5
				if utf16.IsSurrogate(r) {
					// A valid pair is consumed whole; anything else gives
					// U+FFFD and leaves what follows to be read on its own.
					if i+1 < len(d.s) && d.s[i] == '\\' && d.s[i+1] == 'u' {
						if r2, ok := hex4(d.s, i+2); ok {
							if p := utf16.DecodeRune(r, r2); p != utf8.RuneError {
								b = utf8.AppendRune(b, p)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
			default:
				d.i = i
				return "", d.unexpected("in string escape code")
			}
		case c < utf8.RuneSelf:
			if !clean {
				b = append(b, c)
			}
			i++
		default:
			r, size := utf8.DecodeRuneInString(d.s[i:])
			if r == utf8.RuneError && size == 1 {
				if clean {
					b, clean = append(b, d.s[start:i]...), false
				}
				b = utf8.AppendRune(b, utf8.RuneError)
			} else if !clean {
				b = append(b, d.s[i:i+size]...)
			}
			i += size
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hex4(s string, i int) (rune, bool) {
	if len(s)-i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
