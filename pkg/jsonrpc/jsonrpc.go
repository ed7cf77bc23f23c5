// Package jsonrpc parses and builds JSON-RPC 2.0 messages for hearth's
// connections. It answers every malformed frame with an error value instead of
// failing the stream, and keeps request ids verbatim so replies echo exactly
// what the client sent; ids are compared by JSON type and value (1 and "1"
// are two requests: docs/decisions/0030-ids-keep-their-type.md).
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// Standard and hearth error codes. The -320xx codes are hearth's own server
// errors; docs/protocol.md lists when each is sent.
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeStoreError       = -32000 // a store is unreachable (also: the shim resolves another data directory)
	CodeOverloaded       = -32001 // the connection's queue is full (non-tool requests)
	CodeResourceNotFound = -32002 // MCP: resources/read of an unknown URI
	CodeShuttingDown     = -32005 // the daemon is draining; the request was not run
	CodeToolError        = -32003 // a plain tool method (no MCP session) failed under the tool contract
	CodeLost             = -32004 // the reply is lost: the shim lost the daemon with the request in flight, or an HTTP session no longer keeps it (REPLY_NOT_KEPT)
	CodeDuplicateID      = -32006 // a request whose id is that of one still in flight on the connection
	CodeCancelled        = -32800 // $/cancelRequest of a non-tool request
)

// Kind says what a message is.
type Kind int

// The kinds of message.
const (
	Request Kind = iota + 1
	Notification
	Response
)

// ID is a request id kept as the client's JSON text. The zero ID is null.
type ID struct{ raw json.RawMessage }

// RawID returns an ID from JSON text (a string or an integer).
func RawID(raw []byte) ID { return ID{raw: json.RawMessage(raw)} }

// IsNull reports whether the id is null (absent or unknown).
func (id ID) IsNull() bool { return len(id.raw) == 0 }

// Raw is the id's JSON text ("null" for the zero ID).
func (id ID) Raw() []byte {
	if id.IsNull() {
		return []byte("null")
	}
	return id.raw
}

// Key is the id as a map key, keeping its JSON type (envelope.Key, the one
// id key every layer uses): JSON-RPC compares ids by type and value, so 77
// and "77" are two requests, which may be in flight together, and a
// cancellation names one of them; "\u0037" and "7" are one id
// (docs/decisions/0030-ids-keep-their-type.md).
func (id ID) Key() string { return envelope.Key(id.raw) }

func (id ID) MarshalJSON() ([]byte, error) { return id.Raw(), nil }

// Message is one parsed frame.
type Message struct {
	Kind   Kind
	ID     ID
	Method string
	Params json.RawMessage // nil when absent
	Result json.RawMessage // responses only
	Error  json.RawMessage // responses only

	params *jsonval.Doc // Params decoded (with its text, see jsonval.ParseRaw)
	size   int          // bytes the message holds (see Size)
}

// Size is roughly how many bytes the parsed message holds while it waits or
// runs: its decoded frame and raw parts. A queue bounds itself by this.
func (m *Message) Size() int { return m.size }

// ParamsDoc is Params decoded, nil when absent. It shares the frame's
// memory: the frame is decoded once, however many layers read it.
func (m *Message) ParamsDoc() *jsonval.Doc { return m.params }

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// ParseError is a frame that cannot be served, with the id to answer (null
// when the id itself could not be read).
type ParseError struct {
	ID  ID
	Err *Error
}

// Parse classifies one frame. A frame that is not a valid JSON-RPC 2.0
// message yields a ParseError to send back, never a panic or a stream error.
func Parse(line []byte) (*Message, *ParseError) {
	if !utf8.Valid(line) {
		return nil, &ParseError{Err: &Error{Code: CodeParseError, Message: "Parse error: the frame is not valid UTF-8"}}
	}
	// One decode of the whole frame (jsonval accepts exactly what
	// encoding/json accepts), keeping the text of the parts passed on as is.
	doc, err := jsonval.ParseRaw(line)
	if err != nil {
		return nil, parseErr("Parse error: " + shorten(err.Error()))
	}
	root := doc.Root()
	switch root.Kind() {
	case jsonval.Object:
	case jsonval.Array:
		return nil, &ParseError{Err: &Error{Code: CodeInvalidRequest, Message: "Invalid Request: batches (JSON arrays) are not supported; send one message per line"}}
	default:
		return nil, invalid(ID{}, "Invalid Request: a message must be a JSON object")
	}
	raw := func(n *jsonval.Node) json.RawMessage {
		if n == nil {
			return nil
		}
		text, _ := doc.Raw(n)
		return json.RawMessage(text)
	}
	// A member of the envelope written twice makes the frame ambiguous:
	// JSON leaves a repeated name's meaning to the parser, and the shim's
	// envelope, a relay or the client may each read another id. It is
	// refused, under the id when only another member repeats
	// (envelope.Envelope.Repeated says the same).
	if name := repeatedMember(doc); name != "" {
		id := ID{}
		if name != "id" {
			if n := doc.Get(root, "id"); n != nil && validID(n) {
				id = ID{raw: raw(n)}
			}
		}
		return nil, invalid(id, `Invalid Request: the member "`+name+`" is written twice; a frame names each member once`)
	}
	m := &Message{}
	defer func() { m.size = doc.Size() + len(m.ID.raw) + len(m.Params) + len(m.Result) + len(m.Error) }()
	idNode := doc.Get(root, "id")
	if idNode != nil {
		if !validID(idNode) {
			return nil, invalid(ID{}, "Invalid Request: id must be a string or an integer")
		}
		m.ID = ID{raw: raw(idNode)}
	}
	if v := raw(doc.Get(root, "jsonrpc")); !bytes.Equal(v, []byte(`"2.0"`)) {
		return nil, invalid(m.ID, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	method := doc.Get(root, "method")
	if method == nil {
		result, errObj := doc.Get(root, "result"), doc.Get(root, "error")
		if idNode != nil && (result != nil) != (errObj != nil) {
			m.Kind, m.Result, m.Error = Response, raw(result), raw(errObj)
			return m, nil
		}
		return nil, invalid(m.ID, `Invalid Request: a request needs "method"`)
	}
	if method.Kind() != jsonval.String {
		return nil, invalid(m.ID, `Invalid Request: "method" must be a string`)
	}
	m.Method = doc.Str(method)
	if p := doc.Get(root, "params"); p != nil {
		if p.Kind() != jsonval.Object && p.Kind() != jsonval.Array {
			return nil, invalid(m.ID, `Invalid Request: "params" must be an object or an array`)
		}
		m.Params, m.params = raw(p), doc.Sub(p)
	}
	if idNode != nil {
		m.Kind = Request
	} else {
		m.Kind = Notification
	}
	return m, nil
}

// ParseResponse reads a response by its envelope alone (envelope.Scan):
// the id, result and error are kept as text, and nothing inside them is
// decoded, so a relay that only passes a reply on under another id does
// not decode it at all. ok is false unless Parse would take the line as a
// response with the same parts (FuzzParseResponseAgreesWithParse); the
// caller then parses it with Parse, which says what is wrong.
func ParseResponse(line []byte) (m *Message, ok bool) {
	e, ok := envelope.Scan(line)
	if !ok || e.Kind() != envelope.Response || string(e.Version) != `"2.0"` {
		return nil, false
	}
	// The message owns its parts, as Parse's does: the caller may reuse line.
	own := bytes.Clone(line)
	at := func(part []byte) json.RawMessage {
		if part == nil {
			return nil
		}
		off := cap(line) - cap(part)
		return own[off : off+len(part) : off+len(part)]
	}
	m = &Message{Kind: Response, ID: ID{raw: at(e.ID)}, Result: at(e.Result), Error: at(e.Error)}
	m.size = len(own)
	return m, true
}

// repeatedMember names the first member of the envelope the frame's object
// writes twice ("" when none does).
func repeatedMember(doc *jsonval.Doc) string {
	var seen [6]bool
	for it := doc.Kids(doc.Root()); ; {
		m := it.Next()
		if m == nil {
			return ""
		}
		k := doc.Key(m)
		for i, name := range envelopeMembers {
			if k == name {
				if seen[i] {
					return name
				}
				seen[i] = true
			}
		}
	}
}

var envelopeMembers = [6]string{"id", "method", "params", "result", "error", "jsonrpc"}

// validID accepts a JSON string or an integer literal (no fraction, no
// exponent). Null, booleans, objects, arrays and fractions are refused: MCP
// says an id is a string or an integer, and a float id cannot be echoed and
// matched reliably.
func validID(n *jsonval.Node) bool {
	return n.Kind() == jsonval.String || n.IsPlainInt()
}

func parseErr(msg string) *ParseError {
	return &ParseError{Err: &Error{Code: CodeParseError, Message: msg}}
}

func invalid(id ID, msg string) *ParseError {
	return &ParseError{ID: id, Err: &Error{Code: CodeInvalidRequest, Message: msg}}
}

func shorten(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// InternalPrefix begins the methods hearth's own shim and daemon speak to
// each other ($/hearth/hello, $/hearth/tooLarge, $/hearth/attach): never
// an MCP client's, and accepted only from the daemon's own socket
// (docs/threat-model.md).
const InternalPrefix = "$/hearth/"

// IsInternal says whether method is one of hearth's internal methods.
func IsInternal(method string) bool {
	return len(method) >= len(InternalPrefix) && method[:len(InternalPrefix)] == InternalPrefix
}

// InternalRefused is the error for an internal method from a transport
// that may not send it.
func InternalRefused(method string) *Error {
	return &Error{Code: CodeMethodNotFound, Message: "Method not found: " + method +
		" is internal to hearth: only the hearth shim may send it, over the daemon's own socket"}
}

// TooLargeFrame is the reply to a line over the 1 MiB guard (docs/protocol.md,
// "Framing"): a JSON-RPC error whose data is a payload_too_large validation
// result in the schema tools' shape ({ok, reason, errors: [{path, msg}]}), which
// plain JSON-RPC clients of those tools already read.
const TooLargeFrame = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"payload_too_large","data":{"ok":false,"reason":"validation_failed","errors":[{"path":"","msg":"payload_too_large"}]}}}`

// The frame builders below are the only ones: the daemon's sessions, the
// shim and the hosted router all write frames with them, and the handoff's
// frame writer relies on the prefix they begin with. A nil params writes no
// params member; ids, params, results and error objects go in as their JSON
// text, verbatim.

// RequestFrame builds a request frame.
func RequestFrame(id ID, method string, params []byte) []byte {
	b := make([]byte, 0, len(params)+len(method)+48)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id.Raw()...)
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	return appendParams(b, params)
}

// RawNotificationFrame builds a notification frame from its params' JSON
// text.
func RawNotificationFrame(method string, params []byte) []byte {
	b := make([]byte, 0, len(params)+len(method)+40)
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = appendString(b, method)
	return appendParams(b, params)
}

// NotificationFrame builds a notification frame, marshalling params.
func NotificationFrame(method string, params any) ([]byte, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	return RawNotificationFrame(method, p), nil
}

// ResponseFrame builds a response carrying errObj when it is set, else
// result (each the member's JSON text).
func ResponseFrame(id ID, result, errObj []byte) []byte {
	b := make([]byte, 0, len(result)+len(errObj)+48)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id.Raw()...)
	if errObj != nil {
		b = append(b, `,"error":`...)
		b = append(b, errObj...)
	} else {
		b = append(b, `,"result":`...)
		b = append(b, result...)
	}
	return append(b, '}')
}

// ResultFrame builds a response frame from a result's JSON text.
func ResultFrame(id ID, result []byte) []byte { return ResponseFrame(id, result, nil) }

// ErrorFrame builds an error response frame.
func ErrorFrame(id ID, e *Error) []byte { return ResponseFrame(id, nil, e.JSON()) }

// JSON is the error object's JSON text; Data that does not marshal is left
// out.
func (e *Error) JSON() []byte {
	errJSON, err := json.Marshal(e)
	if err != nil {
		errJSON, _ = json.Marshal(&Error{Code: e.Code, Message: e.Message})
	}
	return errJSON
}

func appendParams(b, params []byte) []byte {
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string: as it is between quotes when it
// needs no escape, else as encoding/json writes it (a control character
// as \u00XX, which strconv.Quote would write as \xXX, no JSON escape).
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	if !utf8.ValidString(s) {
		q, _ := json.Marshal(s)
		return append(b, q...)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
