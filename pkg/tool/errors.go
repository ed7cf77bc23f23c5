package tool

import (
	"context"
	"errors"
	"fmt"
)

// Code is a stable error code of the tool contract (docs/protocol.md). Codes are part of
// a tool's schema: adding or renaming one a tool can return needs a schemaVersion bump.
type Code string

// The public error codes. Families should not invent one-off codes; extra detail
// goes in an [Error]'s Fields.
const (
	InvalidRequest    Code = "INVALID_REQUEST"    // bad or unknown arguments
	NotFound          Code = "NOT_FOUND"          // the thing asked for does not exist
	NoIndex           Code = "NO_INDEX"           // an index is needed and not built
	CapabilityMissing Code = "CAPABILITY_MISSING" // optional dependency absent (no backend URL, no embedder, no git)
	QueueOverloaded   Code = "QUEUE_OVERLOADED"   // the connection's queue is full
	ToolTimeout       Code = "TOOL_TIMEOUT"       // the call exceeded its timeout
	Cancelled         Code = "CANCELLED"          // cancelled by the client with $/cancelRequest
	Internal          Code = "INTERNAL"           // an unexpected failure inside the tool
)

// Error is a tool failure. The protocol layer replies with an isError result whose
// JSON is {"code":..., "message":..., <Fields>...}.
type Error struct {
	Code    Code
	Message string
	// Fields are the family's own extra members of the error object (hint,
	// details, timeoutMs, stderr ...). They must not repeat "code" or "message".
	Fields map[string]any
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Object is the JSON object an isError result carries.
func (e *Error) Object() map[string]any {
	m := make(map[string]any, len(e.Fields)+2)
	for k, v := range e.Fields {
		m[k] = v
	}
	m["code"] = string(e.Code)
	m["message"] = e.Message
	return m
}

// With returns a copy of e with one more field set.
func (e *Error) With(key string, value any) *Error {
	c := &Error{Code: e.Code, Message: e.Message, Fields: make(map[string]any, len(e.Fields)+1)}
	for k, v := range e.Fields {
		c.Fields[k] = v
	}
	c.Fields[key] = value
	return c
}

// Errorf builds an [Error] with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// RPCError is a failure that the contract reports as a JSON-RPC error rather than
// as an isError result: a store that cannot be reached (-32000). Handlers return it
// (possibly wrapped) and the protocol layer sends it as the response's error.
type RPCError struct {
	Code    int
	Message string
	Data    any
}

func (e *RPCError) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// CodeStoreUnavailable is the JSON-RPC error code for an unreachable store.
const CodeStoreUnavailable = -32000

// StoreUnavailable is the JSON-RPC error for a store that cannot be reached or is
// corrupt. engine names the store ("SQLite", "PostgreSQL"); the message never
// carries a path, DSN or secret: details belong in the daemon's log.
func StoreUnavailable(engine string) *RPCError {
	return &RPCError{
		Code:    CodeStoreUnavailable,
		Message: "Database connection failed. Please check " + engine + " is running.",
	}
}

// AsError reports whether err is (or wraps) a tool [Error].
func AsError(err error) (*Error, bool) {
	var te *Error
	if errors.As(err, &te) {
		return te, true
	}
	return nil, false
}

// AsRPCError reports whether err is (or wraps) an [RPCError].
func AsRPCError(err error) (*RPCError, bool) {
	var re *RPCError
	if errors.As(err, &re) {
		return re, true
	}
	return nil, false
}

// IsContextDone reports whether err is a cancellation or deadline error.
func IsContextDone(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
