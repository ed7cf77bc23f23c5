package jsondiff

import (
	"bytes"
	"fmt"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds nesting, as encoding/json does, so a hostile document cannot
// exhaust the stack.
const maxDepth = 10000

type kind uint8

const (
	kindNull kind = iota
	kindFalse
	kindTrue
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is one parsed JSON value inside a [document]. It holds offsets rather
// than slices, so the tree has no pointers: building, copying and sorting it
// costs the garbage collector nothing, and parsing is a few allocations per
// document. The value's source text is kept, so equal subtrees are recognised
// by one byte comparison and values are emitted without re-encoding.
type node struct {
	keyOff, keyLen int32 // object key: in the input, or in document.keys when keyDecoded
	rawOff, rawLen int32 // the value's exact source text in the input
	kids, nkids    int32 // children: document.nodes[kids : kids+nkids]
	kind           kind
	flags          uint8
}

const (
	escaped    uint8 = 1 << iota // a string with backslash escapes: compare decoded
	keyDecoded                   // the key had escapes; its decoded bytes are in document.keys
	sorted                       // object members sorted by key, duplicates dropped
)

// document is a parsed JSON text.
type document struct {
	data  []byte
	keys  []byte // decoded keys that had escapes
	nodes []node // every container's children, each container's contiguous
	root  node
}

func (d *document) raw(n *node) []byte { return d.data[n.rawOff : n.rawOff+n.rawLen] }

func (d *document) key(n *node) []byte {
	if n.flags&keyDecoded != 0 {
		return d.keys[n.keyOff : n.keyOff+n.keyLen]
	}
	return d.data[n.keyOff : n.keyOff+n.keyLen]
}

func (d *document) children(n *node) []node { return d.nodes[n.kids : n.kids+n.nkids] }

// SyntaxError is a malformed JSON document.
type SyntaxError struct {
	Offset int // byte offset of the problem
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

type parser struct {
	doc   *document
	data  []byte
	pos   int
	depth int
	stack []node // children of the containers being parsed
}

// maxDocument keeps offsets within int32.
const maxDocument = 1<<31 - 1

// parse parses one JSON document: a single value with optional whitespace
// around it. Strings must be valid UTF-8.
func parse(data []byte) (*document, error) {
	if len(data) > maxDocument {
		return nil, &SyntaxError{Msg: "document larger than 2 GiB"}
	}
	d := &document{data: data, nodes: make([]node, 0, len(data)/16+1)}
	p := parser{doc: d, data: data, stack: make([]node, 0, 64)}
	p.skipSpace()
	if p.pos == len(data) {
		return nil, p.fail("empty document")
	}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(data) {
		return nil, p.fail("unexpected data after the top-level value")
	}
	d.root = n
	return d, nil
}

func (p *parser) fail(format string, args ...any) error {
	return &SyntaxError{Offset: p.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (node, error) {
	if p.pos == len(p.data) {
		return node{}, p.fail("unexpected end of input")
	}
	start := p.pos
	var n node
	var err error
	switch c := p.data[p.pos]; {
	case c == '{':
		n, err = p.container(kindObject, '}')
	case c == '[':
		n, err = p.container(kindArray, ']')
	case c == '"':
		n.kind = kindString
		var esc bool
		esc, err = p.str()
		if esc {
			n.flags |= escaped
		}
	case c == 't':
		n.kind = kindTrue
		err = p.literal("true")
	case c == 'f':
		n.kind = kindFalse
		err = p.literal("false")
	case c == 'n':
		n.kind = kindNull
		err = p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		n.kind = kindNumber
		end := scanNumber(p.data, p.pos)
		if end < 0 {
			return node{}, p.fail("malformed number")
		}
		p.pos = end
	default:
		return node{}, p.fail("unexpected character %q", c)
	}
	if err != nil {
		return node{}, err
	}
	n.rawOff, n.rawLen = int32(start), int32(p.pos-start)
	return n, nil
}

func (p *parser) literal(word string) error {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(word)) {
		return p.fail("invalid literal, expected %s", word)
	}
	p.pos += len(word)
	return nil
}

// container parses an object or array whose opening bracket is at p.pos.
// Children collect on p.stack and move to the document's node store when the
// container closes, so each container's children end up contiguous.
func (p *parser) container(k kind, closer byte) (node, error) {
	p.depth++
	if p.depth > maxDepth {
		return node{}, p.fail("nesting deeper than %d", maxDepth)
	}
	p.pos++
	base := len(p.stack)
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == closer {
		p.pos++
		p.depth--
		return node{kind: k}, nil
	}
	for {
		var keyOff, keyLen int32
		var keyFlag uint8
		if k == kindObject {
			p.skipSpace()
			if p.pos == len(p.data) || p.data[p.pos] != '"' {
				return node{}, p.fail("expected a string object key")
			}
			start := p.pos
			esc, err := p.str()
			if err != nil {
				return node{}, err
			}
			if esc {
				keyOff = int32(len(p.doc.keys))
				p.doc.keys = appendUnescaped(p.doc.keys, p.data[start:p.pos])
				keyLen = int32(len(p.doc.keys)) - keyOff
				keyFlag = keyDecoded
			} else {
				keyOff, keyLen = int32(start+1), int32(p.pos-start-2)
			}
			p.skipSpace()
			if p.pos == len(p.data) || p.data[p.pos] != ':' {
				return node{}, p.fail("expected ':' after object key")
			}
			p.pos++
		}
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return node{}, err
		}
		v.keyOff, v.keyLen = keyOff, keyLen
		v.flags |= keyFlag
		p.stack = append(p.stack, v)
		p.skipSpace()
		if p.pos == len(p.data) {
			return node{}, p.fail("unexpected end of input, expected ',' or %q", closer)
		}
		if c := p.data[p.pos]; c == ',' {
			p.pos++
			continue
		} else if c != closer {
			return node{}, p.fail("expected ',' or %q", closer)
		}
		p.pos++
		break
	}
	p.depth--
	kids := len(p.doc.nodes)
	p.doc.nodes = append(p.doc.nodes, p.stack[base:]...)
	n := node{kind: k, kids: int32(kids), nkids: int32(len(p.stack) - base)}
	p.stack = p.stack[:base]
	return n, nil
}

// str scans a string whose opening quote is at p.pos, leaving p.pos past the
// closing quote, and reports whether it contains escapes.
func (p *parser) str() (escaped bool, err error) {
	p.pos++
	for {
		for p.pos < len(p.data) {
			c := p.data[p.pos]
			if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
				break
			}
			p.pos++
		}
		if p.pos == len(p.data) {
			return false, p.fail("unterminated string")
		}
		switch c := p.data[p.pos]; {
		case c == '"':
			p.pos++
			return escaped, nil
		case c == '\\':
			escaped = true
			if err := p.escape(); err != nil {
				return false, err
			}
		case c < 0x20:
			return false, p.fail("control character %#x in string", c)
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return false, p.fail("invalid UTF-8 in string")
			}
			p.pos += size
		}
	}
}

// escape checks the escape sequence at p.pos (a backslash) and steps past it.
func (p *parser) escape() error {
	if p.pos+1 >= len(p.data) {
		return p.fail("unterminated escape")
	}
	switch p.data[p.pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		p.pos += 2
		return nil
	case 'u':
		if p.pos+6 > len(p.data) {
			return p.fail("short \\u escape")
		}
		for _, h := range p.data[p.pos+2 : p.pos+6] {
			if hexValue(h) < 0 {
				return p.fail("invalid \\u escape")
			}
		}
		p.pos += 6
		return nil
	}
	return p.fail("invalid escape \\%c", p.data[p.pos+1])
}

func hexValue(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// appendUnescaped appends the UTF-8 bytes of a valid quoted JSON string
// (quotes included). A lone surrogate becomes U+FFFD, as in encoding/json.
func appendUnescaped(out, quoted []byte) []byte {
	s := quoted[1 : len(quoted)-1]
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch s[i+1] {
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
			r := hex4(s[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if pair := utf16.DecodeRune(r, hex4(s[i+2:])); pair != utf8.RuneError {
						out = utf8.AppendRune(out, pair)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, s[i+1])
		}
		i += 2
	}
	return out
}

func hex4(s []byte) rune {
	return hexValue(s[0])<<12 | hexValue(s[1])<<8 | hexValue(s[2])<<4 | hexValue(s[3])
}

// sortMembers sorts an object's members by key and keeps only the last of
// duplicate keys (what encoding/json decodes). It is done lazily, only for
// objects the diff actually looks into.
func (d *document) sortMembers(n *node) {
	if n.flags&sorted != 0 {
		return
	}
	n.flags |= sorted
	kids := d.children(n)
	inOrder := true
	for i := 1; i < len(kids); i++ {
		if bytes.Compare(d.key(&kids[i-1]), d.key(&kids[i])) >= 0 {
			inOrder = false
			break
		}
	}
	if inOrder {
		return
	}
	slices.SortStableFunc(kids, func(a, b node) int { return bytes.Compare(d.key(&a), d.key(&b)) })
	out := kids[:0]
	for i := range kids {
		if i+1 < len(kids) && bytes.Equal(d.key(&kids[i]), d.key(&kids[i+1])) {
			continue // a later duplicate wins
		}
		out = append(out, kids[i])
	}
	n.nkids = int32(len(out))
}

// compact returns a copy of valid JSON text without insignificant whitespace.
func compact(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString:
			if c == '\\' {
				out = append(out, c, raw[i+1])
				i++
				continue
			}
			if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		out = append(out, c)
	}
	return out
}
