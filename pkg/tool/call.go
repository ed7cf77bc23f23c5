package tool

import (
	"encoding/json"
	"fmt"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// Level is an MCP logging level (RFC 5424 severities), lowest first.
type Level int

// The MCP logging levels in increasing severity.
const (
	LevelDebug Level = iota
	LevelInfo
	LevelNotice
	LevelWarning
	LevelError
	LevelCritical
	LevelAlert
	LevelEmergency
)

var levelNames = [...]string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func (l Level) String() string {
	if l < 0 || int(l) >= len(levelNames) {
		return fmt.Sprintf("Level(%d)", int(l))
	}
	return levelNames[l]
}

// ParseLevel maps an MCP level name to a Level.
func ParseLevel(s string) (Level, bool) {
	for i, n := range levelNames {
		if n == s {
			return Level(i), true
		}
	}
	return 0, false
}

// Client describes who is calling, as far as the daemon knows.
type Client struct {
	// Cwd is the client's working directory, from the shim's $/hearth/hello.
	// Empty when unknown (a client connected without the shim).
	Cwd string
	// PID is the client's process id from the hello, or the socket peer's pid.
	PID int
	// Name and Version come from the client's initialize clientInfo.
	Name, Version string
	// Roots are the client's declared MCP roots as file paths, when known.
	Roots []string
}

// Reporter carries a call's side messages back to its client. The protocol layer
// implements it: progress is coalesced and never sent after the call's response.
type Reporter interface {
	Progress(progress, total float64, message string)
	Log(level Level, logger string, data any)
}

// Call is what a handler is handed: its validated arguments and a way to talk
// back while it runs.
type Call struct {
	// Tool is the name of the tool being called.
	Tool string
	// Args is the arguments object, already validated against the input schema.
	Args json.RawMessage
	// Client is the caller.
	Client Client

	reporter Reporter
	doc      *jsonval.Doc // Args decoded, when the caller had them (see Doc)
}

// NewCall builds a Call; the protocol layer and tests use it. Pass the
// Args's Doc when you have it (Entry.Check returns it) and nil otherwise.
func NewCall(name string, args json.RawMessage, doc *jsonval.Doc, client Client, r Reporter) *Call {
	if len(args) == 0 {
		args, doc = json.RawMessage("{}"), nil
	}
	return &Call{Tool: name, Args: args, Client: client, reporter: r, doc: doc}
}

// Doc returns the arguments decoded, for handlers that read a large argument
// in place (jsonval.Doc.Sub) instead of binding a copy of its text. It
// decodes them only when the call was built without the decoded form.
func (c *Call) Doc() (*jsonval.Doc, error) {
	if c.doc == nil {
		d, err := jsonval.ParseRaw(c.Args)
		if err != nil {
			return nil, Errorf(InvalidRequest, "arguments of %s are not valid JSON: %v", c.Tool, err)
		}
		c.doc = d
	}
	return c.doc, nil
}

// Bind fills v (a pointer to a struct whose json tags name the schema's
// properties) from the decoded arguments, as encoding/json would, except
// that an integral number binds to an integer field however it is written
// (5e1, 50.0). A value that does not fit its field (a number out of its
// range, or a struct that disagrees with the schema) is an INVALID_REQUEST
// naming the argument's path. A typed tool (For) is bound before its
// handler runs; Bind is for handlers that bind themselves.
func (c *Call) Bind(v any) error {
	d, err := c.Doc()
	if err != nil {
		return err
	}
	if berr := bindArgs(d, v); berr != nil {
		return berr.asToolError(c.Tool)
	}
	return nil
}

// Progress reports how far the call has come (progress strictly increasing;
// total 0 when unknown). Reports are coalesced to at most 4 a second and are
// dropped when the client asked for none or the call has been answered.
func (c *Call) Progress(progress, total float64, message string) {
	if c.reporter != nil {
		c.reporter.Progress(progress, total, message)
	}
}

// Log sends a notifications/message to the client when its level allows.
func (c *Call) Log(level Level, logger string, data any) {
	if c.reporter != nil {
		c.reporter.Log(level, logger, data)
	}
}
