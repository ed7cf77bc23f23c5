// Package envelope reads the top-level envelope of one JSON-RPC frame (its
// id, its method, and which of result, error and params it has) without
// decoding anything else. The shim relays frames of up to 64 MiB and only
// needs to know which request a frame opens or settles; the values of params,
// result, error and any other member are skipped, not decoded.
//
// Skipping still validates: Scan accepts exactly the JSON texts that
// encoding/json accepts (json.Valid), with one deliberate strictness: the
// frame must be valid UTF-8, inside skipped strings too. The daemon refuses a
// frame with invalid UTF-8 as a parse error answered with a null id, so a
// caller that tracks requests by id must not count such a frame as a request;
// with Scan it simply is not ok. Nesting deeper than MaxDepth is refused, as
// encoding/json refuses it.
//
// The package uses the standard library only (not encoding/json) and does
// not allocate while scanning: Scan allocates the Method string when a frame
// has a method, and a bit stack only for values nested deeper than 256
// levels.
package envelope

import (
	"bytes"
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting accepted, the frame's own object counting
// as depth 1: encoding/json's limit.
const MaxDepth = 10000

// Kind says what a frame is.
type Kind uint8

// The kinds of frame.
const (
	Invalid Kind = iota
	Request
	Notification
	Response
)

func (k Kind) String() string {
	switch k {
	case Request:
		return "request"
	case Notification:
		return "notification"
	case Response:
		return "response"
	}
	return "invalid"
}

// Envelope is the top level of one frame. ID and Params share the memory of
// the scanned line: copy them to keep them past the line's reuse.
type Envelope struct {
	// ID is the id's JSON text as written, nil when there is no id member
	// (a written null is kept: "null").
	ID []byte
	// Method is the method's value, unescaped; "" when there is no method
	// member or its value is not a string.
	Method string
	// HasResult and HasError say whether the members are present, whatever
	// their values (null included).
	HasResult, HasError bool
	// Params is the params' JSON text as written, nil when absent.
	Params []byte
	// Result, Error and Version are the result's, the error's and the
	// "jsonrpc" member's JSON text as written, nil when absent (Scan only:
	// ScanHead sets HasResult and HasError alone).
	Result, Error, Version []byte
	// Repeated names the first member of the envelope (id, method, params,
	// result, error, jsonrpc) that the frame writes more than once ("":
	// none). JSON leaves a repeated name's meaning to the parser (the first
	// wins in some, the last in others), so such a frame is Invalid: its
	// id, say, is not one request's. FirstID is the first id written when
	// the id is repeated (ID is the last).
	Repeated string
	FirstID  []byte

	method methodState
}

type methodState uint8

const (
	methodAbsent methodState = iota
	methodString
	methodOther // present, but not a string
)

// Kind classifies the frame as the daemon does, on the envelope alone:
//
//   - Request: a string method and an id;
//   - Notification: a string method and no id member;
//   - Response: no method member, an id, and exactly one of result and error;
//   - Invalid: anything else, and any frame that repeats a member of the
//     envelope (Repeated).
//
// An id counts only when it is a string or an integer literal (no fraction,
// no exponent): the daemon refuses any other id and answers with a null id,
// so such a frame is Invalid. What the envelope alone cannot show is not
// checked: the "jsonrpc" member and the type of params.
func (e Envelope) Kind() Kind {
	if e.Repeated != "" {
		return Invalid
	}
	switch e.method {
	case methodString:
		if e.ID == nil {
			return Notification
		}
		if validID(e.ID) {
			return Request
		}
	case methodAbsent:
		if e.HasResult != e.HasError && validID(e.ID) {
			return Response
		}
	}
	return Invalid
}

// HasMethod says whether the frame has a method member, whatever its value.
func (e Envelope) HasMethod() bool { return e.method != methodAbsent }

// validID reports whether an id's text is a string or an integer literal.
func validID(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"':
		return true
	case c == '-' || '0' <= c && c <= '9':
		return !bytes.ContainsAny(raw, ".eE")
	}
	return false
}

// Scan reads the envelope of one frame. ok is false unless line is exactly
// one JSON object (JSON whitespace around it allowed) in valid UTF-8. A
// repeated member of the envelope is named in Repeated (the frame is then
// Invalid); its last value is the one kept, as encoding/json keeps. Member
// names are compared after unescaping ("\u0069d" is "id").
func Scan(line []byte) (e Envelope, ok bool) {
	var methodRaw []byte
	var seen uint8 // bit k: member k of ours was written
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return Envelope{}, false
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		i++
	} else {
		for {
			if i >= len(line) || line[i] != '"' {
				return Envelope{}, false
			}
			start := i
			var plain bool
			i, plain = scanString(line, i, true)
			if i < 0 {
				return Envelope{}, false
			}
			name := memberOf(line[start+1:i-1], plain)
			if i = skipSpace(line, i); i >= len(line) || line[i] != ':' {
				return Envelope{}, false
			}
			v := skipSpace(line, i+1)
			if i = skipValue(line, v); i < 0 {
				return Envelope{}, false
			}
			if name != memberOther {
				if bit := uint8(1) << name; seen&bit != 0 {
					if e.Repeated == "" {
						e.Repeated = memberNames[name]
					}
					if name == memberID && e.FirstID == nil {
						e.FirstID = e.ID
					}
				} else {
					seen |= bit
				}
			}
			switch val := line[v:i]; name {
			case memberID:
				e.ID = val
			case memberMethod:
				if val[0] == '"' {
					e.method, methodRaw = methodString, val
				} else {
					e.method, methodRaw = methodOther, nil
				}
			case memberParams:
				e.Params = val
			case memberResult:
				e.HasResult, e.Result = true, val
			case memberError:
				e.HasError, e.Error = true, val
			case memberVersion:
				e.Version = val
			}
			if i = skipSpace(line, i); i >= len(line) {
				return Envelope{}, false
			}
			if line[i] == ',' {
				i = skipSpace(line, i+1)
				continue
			}
			if line[i] != '}' {
				return Envelope{}, false
			}
			i++
			break
		}
	}
	if skipSpace(line, i) != len(line) {
		return Envelope{}, false
	}
	if methodRaw != nil {
		e.Method = unquote(methodRaw)
	}
	return e, true
}

// Key is an id as a map key that keeps its JSON type, the daemon's rule
// (jsonrpc.Key: 1 and "1" are two requests): a string id's value between
// quotes, any other text as written, "" for empty or malformed text.
// Surrounding space is ignored. Invalid UTF-8 and unpaired surrogates in a
// string become U+FFFD, as encoding/json decodes them.
func Key(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] != '"' {
		return string(raw)
	}
	end, _ := scanString(raw, 0, false)
	if end < 0 || skipSpace(raw, end) != len(raw) {
		return ""
	}
	if s := raw[1 : end-1]; bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(raw[:end]) // no escapes: the text between its quotes is the key, one allocation
	}
	return `"` + unquote(raw[:end]) + `"`
}

// The members the envelope reads.
const (
	memberOther = iota
	memberID
	memberMethod
	memberParams
	memberResult
	memberError
	memberVersion
)

// memberNames are the envelope's members by their memberOf number.
var memberNames = [...]string{memberID: "id", memberMethod: "method", memberParams: "params", memberResult: "result", memberError: "error", memberVersion: "jsonrpc"}

// memberOf names a member from its key's text between the quotes; plain
// says the text has no escapes.
func memberOf(key []byte, plain bool) int {
	if !plain {
		// Unescape into a small buffer: a name longer than "jsonrpc" or
		// with a non-ASCII character is none of ours.
		var buf [7]byte
		n := 0
		for j := 0; j < len(key); {
			c := key[j]
			if c == '\\' {
				c, j = unescapeASCII(key, j)
			} else {
				j++
			}
			if c == 0 || c >= utf8.RuneSelf || n == len(buf) {
				return memberOther
			}
			buf[n] = c
			n++
		}
		key = buf[:n]
	}
	switch string(key) {
	case "id":
		return memberID
	case "method":
		return memberMethod
	case "params":
		return memberParams
	case "result":
		return memberResult
	case "error":
		return memberError
	case "jsonrpc":
		return memberVersion
	}
	return memberOther
}

// unescapeASCII decodes the (validated) escape at s[j]; it returns the byte
// for an ASCII character other than NUL, else 0, and the index after it.
func unescapeASCII(s []byte, j int) (byte, int) {
	switch e := s[j+1]; e {
	case 'u':
		r := hex4(s[j+2:])
		if r <= 0 || r >= utf8.RuneSelf {
			return 0, j + 6
		}
		return byte(r), j + 6
	default:
		return unescapeTable[e], j + 2
	}
}

// unescapeTable maps a simple escape's letter to its byte (0 for none).
var unescapeTable = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index after the JSON value starting at b[i], or -1.
// The value is a member of the frame's object (depth 1), so containers may
// nest MaxDepth-1 deep inside it. It works without recursion: one bit per
// open container says whether it is an object.
func skipValue(b []byte, i int) int {
	var first [4]uint64
	objects := first[:] // bit k: the container at nesting k is an object; grows past 256
	open := 0
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return -1
		}
		switch c := b[i]; c {
		case '"':
			if i, _ = scanString(b, i, true); i < 0 {
				return -1
			}
		case '{', '[':
			if open+1 >= MaxDepth {
				return -1
			}
			if open/64 == len(objects) {
				objects = append(objects, 0)
			}
			word, bit := open/64, uint64(1)<<(open%64)
			if c == '{' {
				objects[word] |= bit
			} else {
				objects[word] &^= bit
			}
			open++
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == c+2 { // '{'+2 is '}', '['+2 is ']'
				open--
				i++
				break
			}
			if c == '{' {
				if i = skipKey(b, i); i < 0 {
					return -1
				}
			}
			continue
		case 't':
			if i = literal(b, i, "true"); i < 0 {
				return -1
			}
		case 'f':
			if i = literal(b, i, "false"); i < 0 {
				return -1
			}
		case 'n':
			if i = literal(b, i, "null"); i < 0 {
				return -1
			}
		default:
			if i = skipNumber(b, i); i < 0 {
				return -1
			}
		}
		// After a complete value: close containers until one goes on.
		for {
			if open == 0 {
				return i
			}
			if i = skipSpace(b, i); i >= len(b) {
				return -1
			}
			k := open - 1
			object := objects[k/64]&(1<<(k%64)) != 0
			if b[i] == ',' {
				i = skipSpace(b, i+1)
				if object {
					if i = skipKey(b, i); i < 0 {
						return -1
					}
				}
				break
			}
			if object && b[i] == '}' || !object && b[i] == ']' {
				open--
				i++
				continue
			}
			return -1
		}
	}
}

// skipKey skips `"name" :` and the space after it, from b[i].
func skipKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i, _ = scanString(b, i, true); i < 0 {
		return -1
	}
	if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

func literal(b []byte, i int, word string) int {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

// skipNumber returns the index after the number at b[i], or -1:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// SWAR constants: a byte of each in every lane.
const (
	lanes01 = 0x0101010101010101
	lanes20 = 0x20 * lanes01 // the first byte that needs no escape
	lanes22 = '"' * lanes01
	lanes5c = '\\' * lanes01
	lanes80 = 0x80 * lanes01
)

// scanString returns the index after the string whose opening quote is at
// b[i], or -1 when it is not a valid JSON string: unterminated, a control
// character, a bad escape, or (when strictUTF8) invalid UTF-8. plain says
// the string holds no escape. Eight bytes are examined at a time while none
// of them is a quote, a backslash, a control character or non-ASCII.
func scanString(b []byte, i int, strictUTF8 bool) (end int, plain bool) {
	plain = true
	j := i + 1
	for {
		for len(b)-j >= 8 {
			x := binary.LittleEndian.Uint64(b[j:])
			// A lane's high bit is set when the byte is < 0x20, equals '"'
			// or '\\', or is itself >= 0x80.
			special := (x - lanes20) | ((x ^ lanes22) - lanes01) | ((x ^ lanes5c) - lanes01) | x
			if special&lanes80 != 0 {
				break
			}
			j += 8
		}
		if j >= len(b) {
			return -1, false
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, plain
		case c == '\\':
			plain = false
			if j+1 >= len(b) {
				return -1, false
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if hex4(b[j+2:]) < 0 {
					return -1, false
				}
				j += 6
			default:
				return -1, false
			}
		case c < 0x20:
			return -1, false
		case c < utf8.RuneSelf:
			j++
		default:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 && strictUTF8 {
				return -1, false
			}
			j += size
		}
	}
}

// hex4 is the value of the four hex digits starting s, or -1.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// unquote decodes a valid JSON string (quotes included) as encoding/json
// does: escapes resolved, a surrogate pair joined, an unpaired surrogate and
// each invalid UTF-8 byte replaced by U+FFFD.
func unquote(s []byte) string {
	s = s[1 : len(s)-1]
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s)
	}
	out := make([]byte, 0, len(s))
	for j := 0; j < len(s); {
		c := s[j]
		switch {
		case c == '\\':
			if s[j+1] != 'u' {
				out = append(out, unescapeTable[s[j+1]])
				j += 2
				continue
			}
			r := hex4(s[j+2:])
			j += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if len(s)-j >= 6 && s[j] == '\\' && s[j+1] == 'u' {
					r2 = hex4(s[j+2:])
				}
				if p := utf16.DecodeRune(r, r2); p != utf8.RuneError {
					r = p
					j += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		case c < utf8.RuneSelf:
			out = append(out, c)
			j++
		default:
			r, size := utf8.DecodeRune(s[j:])
			out = utf8.AppendRune(out, r)
			j += size
		}
	}
	return string(out)
}

// ScanHead reads what it can of the envelope from the opening bytes of a
// frame too large to be kept whole (head): the members before the first one
// whose value runs past the end of head. A member counts once its value is
// followed, within head, by the ',' or '}' after it (a number cut short is
// not read as a shorter one). HasResult and HasError are set by a member's
// name alone, so a response whose result is cut off still says it is one;
// a method or id written after the cut-off value is not seen. Reading a
// huge reply's id this way lets its request be answered when the reply
// itself must be dropped (docs/protocol.md, "Hosted servers").
func ScanHead(head []byte) Envelope {
	var e Envelope
	var methodRaw []byte
	i := skipSpace(head, 0)
	if i >= len(head) || head[i] != '{' {
		return Envelope{}
	}
	i = skipSpace(head, i+1)
	for i < len(head) && head[i] == '"' {
		start := i
		var plain bool
		if i, plain = scanString(head, i, true); i < 0 {
			break
		}
		name := memberOf(head[start+1:i-1], plain)
		if i = skipSpace(head, i); i >= len(head) || head[i] != ':' {
			break
		}
		switch name {
		case memberResult:
			e.HasResult = true
		case memberError:
			e.HasError = true
		}
		v := skipSpace(head, i+1)
		if i = skipValue(head, v); i < 0 {
			break
		}
		val := head[v:i]
		if i = skipSpace(head, i); i >= len(head) || (head[i] != ',' && head[i] != '}') {
			break
		}
		switch name {
		case memberID:
			if e.ID != nil && e.FirstID == nil {
				e.FirstID, e.Repeated = e.ID, "id"
			}
			e.ID = val
		case memberMethod:
			if val[0] == '"' {
				e.method, methodRaw = methodString, val
			} else {
				e.method, methodRaw = methodOther, nil
			}
		case memberParams:
			e.Params = val
		}
		if head[i] == '}' {
			break
		}
		i = skipSpace(head, i+1)
	}
	if methodRaw != nil {
		e.Method = unquote(methodRaw)
	}
	return e
}
