package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// specSchemas compiles one era's schema.json of the MCP specification, kept
// in testdata/mcp-spec (testdata/README.md says where it came from). A
// missing file fails the test.
type specSchemas struct {
	era string
	c   *jsonschema.Compiler
	url string
	got map[string]*jsonschema.Schema
}

func loadSpecSchemas(t *testing.T, era string) *specSchemas {
	t.Helper()
	path := filepath.Join("testdata", "mcp-spec", "schema", era, "schema.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the MCP specification's schema is missing: %v", err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	url := "file:///mcp-spec/" + era + "/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s := &specSchemas{era: era, c: c, url: url, got: map[string]*jsonschema.Schema{}}
	// The validator must reject something: a CallToolResult without content.
	if s.def(t, "CallToolResult").Validate(map[string]any{"resultType": "complete"}) == nil {
		t.Fatalf("%s: the compiled schema accepts a CallToolResult without content", era)
	}
	return s
}

func (s *specSchemas) def(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	if sch := s.got[name]; sch != nil {
		return sch
	}
	sch, err := s.c.Compile(s.url + "#/$defs/" + name)
	if err != nil {
		t.Fatalf("%s: compile %s: %v", s.era, name, err)
	}
	s.got[name] = sch
	return sch
}

func (s *specSchemas) check(t *testing.T, name string, v any, frame string) {
	t.Helper()
	if err := s.def(t, name).Validate(v); err != nil {
		t.Fatalf("%s: a frame the daemon wrote is not a valid %s:\n%s\n%v", s.era, name, frame, err)
	}
}

// resultDefs names each method's result type, per era.
var resultDefs = map[string]map[string]string{
	"2025-11-25": {
		"initialize": "InitializeResult", "ping": "EmptyResult", "tools/list": "ListToolsResult", "tools/call": "CallToolResult",
		"logging/setLevel": "EmptyResult", "resources/list": "ListResourcesResult", "resources/read": "ReadResourceResult",
		"resources/templates/list": "ListResourceTemplatesResult",
	},
	"2026-07-28": {
		"server/discover": "DiscoverResult", "ping": "Result", "tools/list": "ListToolsResult", "tools/call": "CallToolResult",
		"resources/list": "ListResourcesResult", "resources/read": "ReadResourceResult",
		"resources/templates/list": "ListResourceTemplatesResult", "subscriptions/listen": "SubscriptionsListenResult",
	},
}

// notificationDefs names each notification's type (both eras share them).
var notificationDefs = map[string]string{
	"notifications/progress":                   "ProgressNotification",
	"notifications/message":                    "LoggingMessageNotification",
	"notifications/tools/list_changed":         "ToolListChangedNotification",
	"notifications/resources/list_changed":     "ResourceListChangedNotification",
	"notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
}

// validateFrame checks one frame the daemon wrote as the message it is:
// a response (by the method of the request it answers), a notification or
// a request of the era.
func (s *specSchemas) validateFrame(t *testing.T, line string, methods map[string]string) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
	if err != nil {
		t.Fatalf("%s: not JSON: %s", s.era, line)
	}
	m, _ := v.(map[string]any)
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result *struct {
			ResultType string `json:"resultType"`
		} `json:"result"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &probe); err != nil {
		t.Fatal(err)
	}
	switch {
	case probe.Method != "" && probe.ID != nil:
		if s.era != "2025-11-25" || probe.Method != "roots/list" {
			t.Fatalf("%s: the daemon sent a request: %s", s.era, line)
		}
		s.check(t, "JSONRPCRequest", v, line)
		s.check(t, "ListRootsRequest", v, line)
	case probe.Method != "":
		def := notificationDefs[probe.Method]
		if def == "" || (s.era == "2025-11-25" && probe.Method == "notifications/subscriptions/acknowledged") {
			t.Fatalf("%s: an unexpected notification: %s", s.era, line)
		}
		s.check(t, "JSONRPCNotification", v, line)
		s.check(t, def, v, line)
	case probe.Error != nil:
		s.check(t, "JSONRPCErrorResponse", v, line)
		switch probe.Error.Code {
		case codeUnsupportedVersion:
			s.check(t, "UnsupportedProtocolVersionError", v, line)
		case codeMissingCapability:
			s.check(t, "MissingRequiredClientCapabilityError", v, line)
		}
	case probe.Result != nil:
		s.check(t, "JSONRPCResultResponse", v, line)
		method := methods[string(bytes.TrimSpace(probe.ID))]
		def := resultDefs[s.era][method]
		if probe.Result.ResultType == "input_required" {
			def = "InputRequiredResult"
		}
		if def == "" {
			t.Fatalf("%s: a result to an unknown request (%q): %s", s.era, method, line)
		}
		s.check(t, def, m["result"], line)
	default:
		t.Fatalf("%s: neither a request, a notification nor a response: %s", s.era, line)
	}
}

// recorder drives a session and validates every frame it reads.
type recorder struct {
	t       *testing.T
	c       *client
	spec    *specSchemas
	methods map[string]string // request id (as JSON) → method
	frames  int
}

func (r *recorder) req(id any, method, params string) {
	r.t.Helper()
	idJSON, _ := json.Marshal(id)
	r.methods[string(idJSON)] = method
	if params == "" {
		r.c.sendf(`{"jsonrpc":"2.0","id":%s,"method":%q}`, idJSON, method)
		return
	}
	r.c.sendf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":{%s}}`, idJSON, method, params)
}

// read reads frames until one answers id (validating each), and returns it.
func (r *recorder) read(id any) map[string]any {
	r.t.Helper()
	want := fmt.Sprint(id)
	for {
		var line string
		select {
		case l, ok := <-r.c.lines:
			if !ok {
				r.t.Fatal("the connection closed")
			}
			line = l
		case <-time.After(20 * time.Second):
			r.t.Fatal("no frame within 20s")
		}
		r.frames++
		r.spec.validateFrame(r.t, line, r.methods)
		var m map[string]any
		_ = json.Unmarshal([]byte(line), &m)
		if _, isNote := m["method"]; !isNote && fmt.Sprint(m["id"]) == want {
			return m
		}
		if m["method"] == "roots/list" { // legacy: answer the server's request
			repo := r.t.TempDir()
			r.c.sendf(`{"jsonrpc":"2.0","id":%q,"result":{"roots":[{"uri":"file://%s"}]}}`, m["id"], repo)
		}
	}
}

// TestFramesMatchTheSpecification runs a session of each era through every
// method hearth serves (results, tool errors, protocol errors, progress, log
// messages, list changes, MRTR, subscriptions) and validates every frame the
// daemon writes against that era's schema.json.
func TestFramesMatchTheSpecification(t *testing.T) {
	t.Run("2025-11-25", func(t *testing.T) {
		srv, _ := newTestServer(t, Options{Name: "hearth", Version: "1", Instructions: "test"})
		srv.Registry().AddResources(fakeResources{})
		r := &recorder{t: t, c: startSession(t, srv), spec: loadSpecSchemas(t, "2025-11-25"), methods: map[string]string{}}
		r.req("init", "initialize", `"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}`)
		r.read("init")
		r.c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		r.req(1, "ping", "")
		r.read(1)
		r.req(2, "tools/list", "")
		r.read(2)
		r.req(3, "logging/setLevel", `"level":"debug"`)
		r.read(3)
		r.req(4, "tools/call", `"name":"logger"`)
		r.read(4)
		r.req(5, "tools/call", `"name":"progress","arguments":{"steps":3,"every_ms":300},"_meta":{"progressToken":5}`)
		r.read(5)
		r.req(6, "tools/call", `"name":"not_found"`)
		r.read(6)
		r.req(7, "tools/call", `"name":"whoami"`)
		r.read(7)
		r.req(8, "resources/list", "")
		r.read(8)
		r.req(9, "resources/read", `"uri":"t://a"`)
		r.read(9)
		r.req(10, "resources/templates/list", "")
		r.read(10)
		r.req(11, "resources/read", `"uri":"t://none"`)
		r.read(11)
		r.req(12, "nope", "")
		r.read(12)
		r.req(13, "tools/call", `"name":"panic"`)
		r.read(13)
		r.req(14, "tools/list", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`)
		r.read(14)
		srv.ListChanged(true, true)
		r.req(15, "ping", "")
		r.read(15)
		t.Logf("%d frames valid", r.frames)
	})
	t.Run("2026-07-28", func(t *testing.T) {
		srv, tt := newTestServer(t, Options{Name: "hearth", Version: "1", Instructions: "test"})
		srv.Registry().AddResources(fakeResources{})
		addRepoTool(t, srv)
		r := &recorder{t: t, c: startSession(t, srv), spec: loadSpecSchemas(t, "2026-07-28"), methods: map[string]string{}}
		m := meta("")
		r.c.send(`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{"cwd":"/","pid":1}}`)
		r.req("d", "server/discover", m)
		r.read("d")
		r.req("sub", "subscriptions/listen", `"notifications":{"toolsListChanged":true,"resourcesListChanged":true,"promptsListChanged":true},`+m)
		r.req(1, "tools/list", m)
		r.read(1)
		r.req(2, "tools/call", `"name":"echo","arguments":{"text":"x"},`+m)
		r.read(2)
		r.req(3, "tools/call", `"name":"logger",`+meta(`,"io.modelcontextprotocol/logLevel":"debug"`))
		r.read(3)
		r.req(4, "tools/call", `"name":"progress","arguments":{"steps":3,"every_ms":300},`+meta(`,"progressToken":"p"`))
		r.read(4)
		r.req(5, "tools/call", `"name":"not_found",`+m)
		r.read(5)
		r.req(6, "tools/call", `"name":"repo_tool",`+rootsMeta)
		r.read(6)
		r.req(7, "tools/call", `"name":"repo_tool","inputResponses":{"roots":{"roots":[{"uri":"file:///tmp"}]}},`+rootsMeta)
		r.read(7)
		r.req(8, "resources/list", m)
		r.read(8)
		r.req(9, "resources/read", `"uri":"t://a",`+m)
		r.read(9)
		r.req(10, "resources/templates/list", m)
		r.read(10)
		r.req(11, "resources/read", `"uri":"t://none",`+m)
		r.read(11)
		r.req(12, "ping", "")
		r.read(12)
		r.req(13, "tools/list", `"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}`)
		r.read(13)
		r.req(14, "tools/call", `"name":"repo_tool","inputResponses":{"roots":{"roots":[]}},`+m)
		r.read(14)
		r.req(15, "tools/list", `"_meta":{}`)
		r.read(15)
		r.req(16, "initialize", `"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}`)
		r.read(16)
		r.req(17, "logging/setLevel", `"level":"debug",`+m)
		r.read(17)
		r.req(18, "tools/call", `"name":"panic",`+m)
		r.read(18)
		r.req(19, "tools/call", `"name":"wait","arguments":{"gate":"g"},`+m)
		waitFor(t, func() bool { return tt.count("wait:g") == 1 })
		r.c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":19}}`)
		r.read(19)
		srv.ListChanged(true, true)
		r.req(20, "tools/list", m)
		r.read(20)
		r.c.cancel() // drain: the subscription ends with its result
		r.read("sub")
		t.Logf("%d frames valid", r.frames)
	})
}
