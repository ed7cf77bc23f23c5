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
	"github.com/hearth-mcp/hearth/pkg/jsonrpc/wire"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// The vocabulary of frames (ids, error objects and codes, the internal
// methods, the frame builders) is pkg/jsonrpc/wire's, which holds no
// decoder so that the shim links it alone; its names are given here again,
// so that a layer that parses frames imports one package.

// Error codes (wire's; docs/protocol.md lists when each is sent).
const (
	CodeParseError       = wire.CodeParseError
	CodeInvalidRequest   = wire.CodeInvalidRequest
	CodeMethodNotFound   = wire.CodeMethodNotFound
	CodeInvalidParams    = wire.CodeInvalidParams
	CodeInternalError    = wire.CodeInternalError
	CodeStoreError       = wire.CodeStoreError
	CodeOverloaded       = wire.CodeOverloaded
	CodeResourceNotFound = wire.CodeResourceNotFound
	CodeShuttingDown     = wire.CodeShuttingDown
	CodeToolError        = wire.CodeToolError
	CodeLost             = wire.CodeLost
	CodeDuplicateID      = wire.CodeDuplicateID
	CodeCancelled        = wire.CodeCancelled
)

// Kind says what a message is (wire.Kind).
type Kind = wire.Kind

// The kinds of message.
const (
	Request      = wire.Request
	Notification = wire.Notification
	Response     = wire.Response
)

// ID is a request id kept as the client's JSON text (wire.ID).
type ID = wire.ID

// Error is a JSON-RPC error object (wire.Error).
type Error = wire.Error

// RawID returns an ID from JSON text (wire.RawID).
func RawID(raw []byte) ID { return wire.RawID(raw) }

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
				id = RawID(raw(n))
			}
		}
		return nil, invalid(id, `Invalid Request: the member "`+name+`" is written twice; a frame names each member once`)
	}
	m := &Message{}
	defer func() {
		m.size = doc.Size() + len(m.Params) + len(m.Result) + len(m.Error)
		if !m.ID.IsNull() {
			m.size += len(m.ID.Raw())
		}
	}()
	idNode := doc.Get(root, "id")
	if idNode != nil {
		if !validID(idNode) {
			return nil, invalid(ID{}, "Invalid Request: id must be a string or an integer")
		}
		m.ID = RawID(raw(idNode))
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
	m = &Message{Kind: Response, ID: RawID(at(e.ID)), Result: at(e.Result), Error: at(e.Error)}
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

// InternalPrefix begins hearth's internal methods (wire.InternalPrefix).
const InternalPrefix = wire.InternalPrefix

// IsInternal says whether method is one of hearth's internal methods.
func IsInternal(method string) bool { return wire.IsInternal(method) }

// InternalRefused is the error for an internal method from a transport
// that may not send it.
func InternalRefused(method string) *Error { return wire.InternalRefused(method) }

// TooLargeFrame is the reply to a line over the 1 MiB guard
// (wire.TooLargeFrame).
const TooLargeFrame = wire.TooLargeFrame

// The frame builders (wire's, the only ones).

// RequestFrame builds a request frame.
func RequestFrame(id ID, method string, params []byte) []byte {
	return wire.RequestFrame(id, method, params)
}

// RawNotificationFrame builds a notification frame from its params' JSON
// text.
func RawNotificationFrame(method string, params []byte) []byte {
	return wire.RawNotificationFrame(method, params)
}

// NotificationFrame builds a notification frame, marshalling params.
func NotificationFrame(method string, params any) ([]byte, error) {
	return wire.NotificationFrame(method, params)
}

// ResponseFrame builds a response carrying errObj when it is set, else
// result.
func ResponseFrame(id ID, result, errObj []byte) []byte {
	return wire.ResponseFrame(id, result, errObj)
}

// ResultFrame builds a response frame from a result's JSON text.
func ResultFrame(id ID, result []byte) []byte { return wire.ResultFrame(id, result) }

// ErrorFrame builds an error response frame.
func ErrorFrame(id ID, e *Error) []byte { return wire.ErrorFrame(id, e) }
