package jsonval

import (
	"fmt"
	"math"
	"sync"
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

// MaxSize is the largest input Parse takes: offsets are 32-bit (and on a
// 32-bit system no input can be longer than an int counts anyway).
const MaxSize = min(1<<32-1, math.MaxInt)

// Parse decodes one JSON value that fills data (surrounding whitespace
// allowed). data is copied once; the document's strings share that copy.
func Parse(data []byte) (*Doc, error) { return parse(string(data), false) }

// ParseString is Parse for a string; the document's strings share s.
func ParseString(s string) (*Doc, error) { return parse(s, false) }

// ParseRaw is Parse that also keeps every value's source text, for Raw:
// for a protocol layer that passes parts of a message on verbatim.
func ParseRaw(data []byte) (*Doc, error) { return parse(string(data), true) }

func parse(s string, spans bool) (*Doc, error) {
	if len(s) > MaxSize {
		return nil, &SyntaxError{"document too large", MaxSize}
	}
	d := decoders.Get().(*decoder)
	defer d.release()
	d.s, d.i = s, 0
	// JSON spends a few bytes on every value: this usually holds them all.
	d.nodes = make([]Node, 0, max(8, len(s)/16))
	if spans {
		d.spans = make([]span, 0, cap(d.nodes))
	}
	d.space()
	if d.i == len(s) {
		return nil, &SyntaxError{"unexpected end of JSON input", d.i}
	}
	if err := d.value(0, 0, 0); err != nil {
		return nil, err
	}
	d.space()
	if d.i != len(s) {
		return nil, d.unexpected("after top-level value")
	}
	doc := &Doc{src: s, extra: string(d.extra), nodes: d.nodes, root: d.nodes[0], first: 1}
	if spans {
		doc.spans, doc.rootSpan = d.spans, d.spans[0]
	}
	return doc, nil
}

type decoder struct {
	s     string
	i     int
	depth int
	nodes []Node // in document order
	spans []span // beside nodes, when kept
	extra []byte // text of strings that needed unescaping
}

// decoders keeps decoders (and their unescaping buffer) between documents.
var decoders = sync.Pool{New: func() any { return new(decoder) }}

func (d *decoder) release() {
	d.s, d.nodes, d.spans, d.depth = "", nil, nil, 0
	if cap(d.extra) > 1<<16 {
		d.extra = nil // do not keep a huge document's buffer forever
	}
	d.extra = d.extra[:0]
	decoders.Put(d)
}

func (d *decoder) unexpected(where string) error {
	if d.i >= len(d.s) {
		return &SyntaxError{"unexpected end of JSON input", d.i}
	}
	return &SyntaxError{fmt.Sprintf("invalid character %q %s", d.s[d.i], where), d.i}
}

func (d *decoder) space() {
	for d.i < len(d.s) && d.s[d.i] <= ' ' {
		switch d.s[d.i] {
		case ' ', '\t', '\r':
			d.i++
		case '\n':
			d.i++
			// Indentation: eight spaces at a time (one 64-bit compare),
			// then four, then two.
			for len(d.s)-d.i >= 8 && d.s[d.i:d.i+8] == "        " {
				d.i += 8
			}
			if len(d.s)-d.i >= 4 && d.s[d.i:d.i+4] == "    " {
				d.i += 4
			}
			if len(d.s)-d.i >= 2 && d.s[d.i:d.i+2] == "  " {
				d.i += 2
			}
		default:
			return
		}
	}
}

// value decodes the value at d.i and appends its node, with the key it has
// in its object, followed by its subtree.
func (d *decoder) value(keyOff, keyLen uint32, keyFlag uint8) error {
	if d.i >= len(d.s) {
		return d.unexpected("")
	}
	n := Node{flags: keyFlag, keyOff: keyOff, keyLen: keyLen}
	start := d.i
	switch c := d.s[d.i]; c {
	case '{':
		return d.container(n, Object, '}')
	case '[':
		return d.container(n, Array, ']')
	case '"':
		off, ln, extra, err := d.str()
		if err != nil {
			return err
		}
		n.kind, n.a, n.b = String, off, ln
		if extra {
			n.flags |= strInExtra
		}
	case 't':
		n.kind = True
		if err := d.literal("true"); err != nil {
			return err
		}
	case 'f':
		n.kind = False
		if err := d.literal("false"); err != nil {
			return err
		}
	case 'n':
		n.kind = Null
		if err := d.literal("null"); err != nil {
			return err
		}
	default:
		if c != '-' && (c < '0' || '9' < c) {
			return d.unexpected("looking for beginning of value")
		}
		plain, err := d.number()
		if err != nil {
			return err
		}
		n.kind, n.a, n.b = Number, uint32(start), uint32(d.i-start)
		if plain {
			n.flags |= plainInt
		}
	}
	d.nodes = append(d.nodes, n)
	if d.spans != nil {
		d.spans = append(d.spans, span{uint32(start), uint32(d.i)})
	}
	return nil
}

func (d *decoder) literal(word string) error {
	if len(d.s)-d.i >= len(word) && d.s[d.i:d.i+len(word)] == word {
		d.i += len(word)
		return nil
	}
	for j := 0; j < len(word); j++ { // point at the first wrong byte
		if d.i >= len(d.s) || d.s[d.i] != word[j] {
			return d.unexpected("in literal " + word)
		}
		d.i++
	}
	return nil
}

// container decodes an object or array: its node first, then its children
// (each followed by its own subtree); the child count and the subtree's
// end are filled in when it closes.
func (d *decoder) container(n Node, kind Kind, end byte) error {
	n.kind = kind
	at := len(d.nodes)
	d.nodes = append(d.nodes, n)
	if d.spans != nil {
		d.spans = append(d.spans, span{from: uint32(d.i)})
	}
	d.i++
	if d.depth++; d.depth > MaxDepth {
		return &SyntaxError{"exceeded max depth", d.i - 1}
	}
	d.space()
	count := uint32(0)
	if d.i < len(d.s) && d.s[d.i] == end {
		d.i++
	} else {
		for {
			var keyOff, keyLen uint32
			var keyFlag uint8
			if kind == Object {
				if d.i >= len(d.s) || d.s[d.i] != '"' {
					return d.unexpected("looking for beginning of object key string")
				}
				off, ln, extra, err := d.str()
				if err != nil {
					return err
				}
				keyOff, keyLen = off, ln
				if extra {
					keyFlag = keyInExtra
				}
				d.space()
				if d.i >= len(d.s) || d.s[d.i] != ':' {
					return d.unexpected("after object key")
				}
				d.i++
				d.space()
			}
			if err := d.value(keyOff, keyLen, keyFlag); err != nil {
				return err
			}
			count++
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
				return d.unexpected("after object key:value pair")
			}
			return d.unexpected("after array element")
		}
	}
	d.depth--
	d.nodes[at].a, d.nodes[at].b = count, uint32(len(d.nodes))
	if d.spans != nil {
		d.spans[at].to = uint32(d.i)
	}
	return nil
}

// number scans RFC 8259's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *decoder) number() (plain bool, err error) {
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
		return false, d.unexpected("in numeric literal")
	}
	plain = true
	if d.i < len(d.s) && d.s[d.i] == '.' {
		plain = false
		d.i++
		if !digits() {
			return false, d.unexpected("after decimal point in numeric literal")
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		plain = false
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if !digits() {
			return false, d.unexpected("in exponent of numeric literal")
		}
	}
	return plain, nil
}

// strPlain marks the bytes a string can hold as they are: not '"', '\\',
// a control character, or the start of a multi-byte sequence.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plain8 reports whether none of eight bytes ends or escapes a string or
// needs a UTF-8 check: no '"', '\\', control character or byte ≥ 0x80. It
// tests them together in one 64-bit word (the classic "has a zero byte"
// trick: b-1 borrows into bit 7 only where b was 0, or b ≥ 0x81 wrapped).
func plain8(s string) bool {
	_ = s[7]
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) &^ v & highs }
	return (zero(x^(ones*'"'))|zero(x^(ones*'\\'))|(x-ones*0x20)&^x|x)&highs == 0
}

// str decodes a string at d.i (its opening quote) and returns where its
// text is: in the input (without escapes, valid UTF-8) or in d.extra.
func (d *decoder) str() (off, n uint32, extra bool, err error) {
	start := d.i + 1
	j := start
	for len(d.s)-j >= 8 && plain8(d.s[j:j+8]) {
		j += 8
	}
	for j < len(d.s) && strPlain[d.s[j]] {
		j++
	}
	if j < len(d.s) && d.s[j] == '"' {
		d.i = j + 1
		return uint32(start), uint32(j - start), false, nil
	}
	return d.strSlow(start)
}

// strSlow decodes a string with escapes or non-ASCII bytes as
// encoding/json does: invalid UTF-8 bytes and unpaired surrogates become
// U+FFFD, control characters are errors.
func (d *decoder) strSlow(start int) (off, n uint32, extra bool, err error) {
	at := len(d.extra)
	b := d.extra
	defer func() { d.extra = b }()
	fail := func(e error) (uint32, uint32, bool, error) { b = b[:at]; return 0, 0, false, e }
	clean := true // nothing changed: the input substring is the value
	i := start
	for {
		if i >= len(d.s) {
			d.i = i
			return fail(&SyntaxError{"unexpected end of JSON input", i})
		}
		c := d.s[i]
		switch {
		case c == '"':
			d.i = i + 1
			if clean {
				return uint32(start), uint32(i - start), false, nil
			}
			if len(b) > MaxSize {
				return fail(&SyntaxError{"document too large", i})
			}
			return uint32(at), uint32(len(b) - at), true, nil
		case c < 0x20:
			d.i = i
			return fail(d.unexpected("in string literal"))
		case c == '\\':
			if clean {
				b, clean = append(b, d.s[start:i]...), false
			}
			i++
			if i >= len(d.s) {
				d.i = i
				return fail(&SyntaxError{"unexpected end of JSON input", i})
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
					return fail(d.unexpected("in \\u hexadecimal character escape"))
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
				return fail(d.unexpected("in string escape code"))
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
