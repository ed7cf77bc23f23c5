// Package jsonc parses JSON, and optionally JSON with comments and trailing
// commas (the JSONC of VS Code's settings files), into a tree that records
// where each value, and each member's key, lies in the source. A caller that
// must change a few values of a file a person also edits (a client's MCP
// config) replaces those byte spans in the original text and keeps
// everything else, comments, key order and indentation included, instead of
// re-serialising a decoded document that would lose them.
package jsonc

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds nesting, so a hostile file cannot exhaust the stack.
const MaxDepth = 1000

// Kind is the JSON type of a Node.
type Kind uint8

const (
	Object Kind = iota + 1
	Array
	String
	Number
	Bool
	Null
)

func (k Kind) String() string {
	switch k {
	case Object:
		return "an object"
	case Array:
		return "an array"
	case String:
		return "a string"
	case Number:
		return "a number"
	case Bool:
		return "a boolean"
	case Null:
		return "null"
	}
	return "nothing"
}

// Node is one JSON value and its byte span [Start, End) in the source.
type Node struct {
	Kind       Kind
	Start, End int
	Str        string   // a String's decoded value
	Members    []Member // an Object's members, in source order (duplicates kept)
	Elems      []*Node  // an Array's elements
}

// Member is an object's key and value; the key's span includes its quotes.
type Member struct {
	Key              string
	KeyStart, KeyEnd int
	Value            *Node
}

// Get returns the value of key in an object, the last one when the key
// repeats (as JavaScript and encoding/json read it), or nil.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != Object {
		return nil
	}
	for i := len(n.Members) - 1; i >= 0; i-- {
		if n.Members[i].Key == key {
			return n.Members[i].Value
		}
	}
	return nil
}

// Visible returns an object's members as readers see them: of a key that
// repeats, only its last member, in source order.
func (n *Node) Visible() []Member {
	last := make(map[string]int, len(n.Members))
	for i, m := range n.Members {
		last[m.Key] = i
	}
	if len(last) == len(n.Members) {
		return n.Members
	}
	out := make([]Member, 0, len(last))
	for i, m := range n.Members {
		if last[m.Key] == i {
			out = append(out, m)
		}
	}
	return out
}

// Options says which extensions of JSON are accepted.
type Options struct {
	Comments       bool // `// line` and `/* block */` comments wherever whitespace may be
	TrailingCommas bool // a comma after an object's or an array's last entry
}

// JSONC is what VS Code accepts in its configuration files.
var JSONC = Options{Comments: true, TrailingCommas: true}

// SyntaxError says what is wrong and where, as a person opening the file
// in an editor would look for it.
type SyntaxError struct {
	Msg          string
	Offset       int // byte offset
	Line, Column int // 1-based; the column counts bytes
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Parse parses one JSON value that fills src (whitespace, a UTF-8 byte
// order mark and, if allowed, comments around it).
func Parse(src []byte, opt Options) (*Node, error) {
	p := &parser{src: src, opt: opt}
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		p.i = 3
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.i == len(src) {
		return nil, p.fail(p.i, "no JSON value: the file is empty")
	}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.i != len(src) {
		return nil, p.fail(p.i, "unexpected %s after the top-level value", p.what(p.i))
	}
	return n, nil
}

// Blank reports whether src holds nothing but whitespace (and, if allowed,
// comments): an empty config file rather than a broken one.
func Blank(src []byte, opt Options) bool {
	p := &parser{src: src, opt: opt}
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		p.i = 3
	}
	return p.space() == nil && p.i == len(src)
}

type parser struct {
	src []byte
	i   int
	opt Options
}

func (p *parser) fail(at int, format string, args ...any) error {
	line, col := 1, 1
	for _, c := range p.src[:min(at, len(p.src))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &SyntaxError{Msg: fmt.Sprintf(format, args...), Offset: at, Line: line, Column: col}
}

// what names the byte at i for an error message.
func (p *parser) what(i int) string {
	if i >= len(p.src) {
		return "end of file"
	}
	c := p.src[i]
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// space skips whitespace and, when allowed, comments.
func (p *parser) space() error {
	for p.i < len(p.src) {
		switch c := p.src[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.i++
		case c == '/' && p.opt.Comments && p.i+1 < len(p.src) && p.src[p.i+1] == '/':
			for p.i < len(p.src) && p.src[p.i] != '\n' {
				p.i++
			}
		case c == '/' && p.opt.Comments && p.i+1 < len(p.src) && p.src[p.i+1] == '*':
			start := p.i
			p.i += 2
			for {
				if p.i+1 >= len(p.src) {
					return p.fail(start, "a /* comment opened here is never closed")
				}
				if p.src[p.i] == '*' && p.src[p.i+1] == '/' {
					p.i += 2
					break
				}
				p.i++
			}
		case c == '/':
			if p.opt.Comments {
				return p.fail(p.i, "unexpected '/': a comment starts with // or /*")
			}
			return p.fail(p.i, "unexpected '/': comments are not allowed in this file")
		default:
			return nil
		}
	}
	return nil
}

func (p *parser) value(depth int) (*Node, error) {
	if depth >= MaxDepth {
		return nil, p.fail(p.i, "nested deeper than %d levels", MaxDepth)
	}
	if p.i >= len(p.src) {
		return nil, p.fail(p.i, "unexpected end of file: a value is missing")
	}
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		start := p.i
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &Node{Kind: String, Start: start, End: p.i, Str: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		for _, lit := range [...]struct {
			word string
			kind Kind
		}{{"true", Bool}, {"false", Bool}, {"null", Null}} {
			if p.hasWord(lit.word) {
				start := p.i
				p.i += len(lit.word)
				return &Node{Kind: lit.kind, Start: start, End: p.i}, nil
			}
		}
		return nil, p.fail(p.i, "unexpected %s: a value is expected", p.what(p.i))
	}
}

func (p *parser) hasWord(w string) bool {
	if len(p.src)-p.i < len(w) || string(p.src[p.i:p.i+len(w)]) != w {
		return false
	}
	end := p.i + len(w)
	if end < len(p.src) {
		c := p.src[end]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			return false
		}
	}
	return true
}

func (p *parser) object(depth int) (*Node, error) {
	n := &Node{Kind: Object, Start: p.i}
	p.i++       // {
	comma := -1 // where the comma after the last member is, if one is
	for {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.i < len(p.src) && p.src[p.i] == '}' {
			if comma >= 0 && !p.opt.TrailingCommas {
				return nil, p.fail(comma, "a comma after the last member of an object")
			}
			p.i++
			n.End = p.i
			return n, nil
		}
		if p.i >= len(p.src) {
			return nil, p.fail(n.Start, "an object opened here is never closed")
		}
		if p.src[p.i] != '"' {
			return nil, p.fail(p.i, "unexpected %s: an object member's key (a string) is expected", p.what(p.i))
		}
		m := Member{KeyStart: p.i}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		m.Key, m.KeyEnd = key, p.i
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return nil, p.fail(p.i, "unexpected %s: ':' is expected after the key %q", p.what(p.i), key)
		}
		p.i++
		if err := p.space(); err != nil {
			return nil, err
		}
		if m.Value, err = p.value(depth + 1); err != nil {
			return nil, err
		}
		n.Members = append(n.Members, m)
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.i >= len(p.src) {
			return nil, p.fail(n.Start, "an object opened here is never closed")
		}
		switch p.src[p.i] {
		case ',':
			comma = p.i
			p.i++
		case '}':
			comma = -1
		default:
			return nil, p.fail(p.i, "unexpected %s: ',' or '}' is expected after the member %q", p.what(p.i), key)
		}
	}
}

func (p *parser) array(depth int) (*Node, error) {
	n := &Node{Kind: Array, Start: p.i}
	p.i++ // [
	comma := -1
	for {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.i < len(p.src) && p.src[p.i] == ']' {
			if comma >= 0 && !p.opt.TrailingCommas {
				return nil, p.fail(comma, "a comma after the last element of an array")
			}
			p.i++
			n.End = p.i
			return n, nil
		}
		if p.i >= len(p.src) {
			return nil, p.fail(n.Start, "an array opened here is never closed")
		}
		e, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Elems = append(n.Elems, e)
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.i >= len(p.src) {
			return nil, p.fail(n.Start, "an array opened here is never closed")
		}
		switch p.src[p.i] {
		case ',':
			comma = p.i
			p.i++
		case ']':
			comma = -1
		default:
			return nil, p.fail(p.i, "unexpected %s: ',' or ']' is expected after an array element", p.what(p.i))
		}
	}
}

func (p *parser) number() (*Node, error) {
	start := p.i
	if p.src[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		s := p.i
		for p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '9' {
			p.i++
		}
		return p.i - s
	}
	intStart := p.i
	switch d := digits(); {
	case d == 0:
		return nil, p.fail(p.i, "unexpected %s in a number: a digit is expected", p.what(p.i))
	case d > 1 && p.src[intStart] == '0':
		return nil, p.fail(intStart, "a number with a leading zero")
	}
	if p.i < len(p.src) && p.src[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.fail(p.i, "unexpected %s in a number: a digit is expected after '.'", p.what(p.i))
		}
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		p.i++
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.fail(p.i, "unexpected %s in a number's exponent: a digit is expected", p.what(p.i))
		}
	}
	return &Node{Kind: Number, Start: start, End: p.i}, nil
}

// str reads a string at p.i (its opening quote) and returns it decoded.
func (p *parser) str() (string, error) {
	start := p.i
	p.i++
	var out []byte
	plain := p.i // start of the run not yet copied to out
	for {
		if p.i >= len(p.src) {
			return "", p.fail(start, "a string opened here is never closed")
		}
		c := p.src[p.i]
		switch {
		case c == '"':
			s := string(append(out, p.src[plain:p.i]...))
			p.i++
			return s, nil
		case c < 0x20:
			return "", p.fail(p.i, "a control character (byte 0x%02x) in a string: it must be escaped", c)
		case c == '\\':
			out = append(out, p.src[plain:p.i]...)
			if p.i+1 >= len(p.src) {
				return "", p.fail(start, "a string opened here is never closed")
			}
			esc := p.src[p.i+1]
			p.i += 2
			switch esc {
			case '"', '\\', '/':
				out = append(out, esc)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := p.hex4(p.i)
				if !ok {
					return "", p.fail(p.i-2, `a \u escape needs four hexadecimal digits`)
				}
				p.i += 4
				if utf16.IsSurrogate(r) {
					if r2, ok := p.hex4(p.i + 2); ok && p.i+1 < len(p.src) && p.src[p.i] == '\\' && p.src[p.i+1] == 'u' {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							p.i += 6
							r = d
						} else {
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError // a lone surrogate, as encoding/json decodes it
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				return "", p.fail(p.i-2, "an unknown escape %s in a string", strconv.Quote(`\`+string(rune(esc))))
			}
			plain = p.i
		case c >= utf8.RuneSelf:
			// Invalid UTF-8 decodes as U+FFFD, as encoding/json decodes it;
			// the source bytes stay as they are.
			r, size := utf8.DecodeRune(p.src[p.i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, p.src[plain:p.i]...)
				out = utf8.AppendRune(out, utf8.RuneError)
				plain = p.i + 1
			}
			p.i += size
		default:
			p.i++
		}
	}
}

func (p *parser) hex4(at int) (rune, bool) {
	if at+4 > len(p.src) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.src[at:at+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	return rune(v), true
}
