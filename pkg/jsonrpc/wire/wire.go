// Package wire is JSON-RPC 2.0 as hearth writes it: ids kept as the
// client's JSON text, error objects and hearth's error codes, the names
// of hearth's internal methods, and the one set of frame builders every
// layer writes frames with. It holds no decoder: the shim, which only
// writes frames and reads their envelopes (pkg/envelope), links it
// without the daemon's (pkg/jsonval, under pkg/jsonrpc's Parse).
// pkg/jsonrpc gives every name here again, so that a layer that parses
// frames imports one package.
package wire

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/hearth-mcp/hearth/pkg/envelope"
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

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// JSON is the error object's JSON text; Data that does not marshal is left
// out.
func (e *Error) JSON() []byte {
	errJSON, err := json.Marshal(e)
	if err != nil {
		errJSON, _ = json.Marshal(&Error{Code: e.Code, Message: e.Message})
	}
	return errJSON
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
	b = AppendString(b, method)
	return appendParams(b, params)
}

// RawNotificationFrame builds a notification frame from its params' JSON
// text.
func RawNotificationFrame(method string, params []byte) []byte {
	b := make([]byte, 0, len(params)+len(method)+40)
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = AppendString(b, method)
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

func appendParams(b, params []byte) []byte {
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// AppendString appends s as a JSON string: as it is between quotes when it
// needs no escape, else as encoding/json writes it (a control character
// as \u00XX, which strconv.Quote would write as \xXX, no JSON escape).
func AppendString(b []byte, s string) []byte {
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
