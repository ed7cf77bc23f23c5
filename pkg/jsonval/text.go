package jsonval

import (
	"unicode/utf8"
)

// AppendCompact appends the JSON text of n (d's root or a node of d) to buf
// without insignificant whitespace, and returns the extended buffer. A
// document that keeps its text (ParseRaw) gives the input's own text:
// escapes, number literals and duplicated keys as they were written
// (invalid UTF-8 becomes U+FFFD, as in the decoded value). Another gives
// an encoding of the value, in document order, with number literals as
// written and strings escaped as encoding/json escapes them (without its
// HTML escaping). Either way the text decodes to n's value.
func (d *Doc) AppendCompact(buf []byte, n *Node) []byte {
	if raw, ok := d.Raw(n); ok {
		return appendCompact(buf, raw)
	}
	return d.appendValue(buf, n)
}

// appendCompact appends valid JSON text without the whitespace between
// tokens, copying unchanged runs whole.
func appendCompact(buf []byte, s string) []byte {
	from := 0 // the start of the run not yet copied
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\r':
			buf = append(buf, s[from:i]...)
			for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
				i++
			}
			from = i
		case '"':
			for i++; s[i] != '"'; {
				switch c := s[i]; {
				case c == '\\':
					i += 2
				case c < utf8.RuneSelf:
					i++
				default:
					r, size := utf8.DecodeRuneInString(s[i:])
					if r == utf8.RuneError && size == 1 {
						buf = append(buf, s[from:i]...)
						buf = utf8.AppendRune(buf, utf8.RuneError)
						from = i + 1
					}
					i += size
				}
			}
			i++
		default:
			i++
		}
	}
	return append(buf, s[from:]...)
}

// appendValue encodes n.
func (d *Doc) appendValue(buf []byte, n *Node) []byte {
	switch n.kind {
	case Null:
		return append(buf, "null"...)
	case False:
		return append(buf, "false"...)
	case True:
		return append(buf, "true"...)
	case Number:
		return append(buf, d.Str(n)...)
	case String:
		return appendString(buf, d.Str(n))
	}
	opening, closing := byte('['), byte(']')
	if n.kind == Object {
		opening, closing = '{', '}'
	}
	buf = append(buf, opening)
	it := d.Kids(n)
	for m, first := it.Next(), true; m != nil; m, first = it.Next(), false {
		if !first {
			buf = append(buf, ',')
		}
		if n.kind == Object {
			buf = append(appendString(buf, d.Key(m)), ':')
		}
		buf = d.appendValue(buf, m)
	}
	return append(buf, closing)
}

const hexDigits = "0123456789abcdef"

// appendString appends s quoted as encoding/json quotes a string when it
// does not escape HTML: '"', '\\' and control characters escaped (\b, \f,
// \n, \r, \t by name), U+2028 and U+2029 escaped, invalid UTF-8 as \ufffd.
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	from := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			buf = append(buf, s[from:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\b':
				buf = append(buf, '\\', 'b')
			case '\f':
				buf = append(buf, '\\', 'f')
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			from = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			buf = append(append(buf, s[from:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			buf = append(append(buf, s[from:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		from = i
	}
	return append(append(buf, s[from:]...), '"')
}
