package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func ok(context.Context, *Call) (any, error) { return map[string]any{}, nil }

func valid() Tool {
	return Tool{
		Name: "t", Description: "a tool", SchemaVersion: 1, Handler: ok,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"n":{"type":"integer","minimum":1,"description":"a count"},"timeout_ms":{"type":"integer","description":"limit"}}}`),
	}
}

func TestRegistryRefusesContractViolations(t *testing.T) {
	cases := []struct {
		name   string
		modify func(*Tool)
		want   string
	}{
		{"bad name", func(t *Tool) { t.Name = "has space" }, "name must be"},
		{"empty name", func(t *Tool) { t.Name = "" }, "name must be"},
		{"no description", func(t *Tool) { t.Description = " " }, "description is empty"},
		{"schemaVersion 0", func(t *Tool) { t.SchemaVersion = 0 }, "schemaVersion"},
		{"no handler", func(t *Tool) { t.Handler = nil }, "no handler"},
		{"schema not JSON", func(t *Tool) { t.InputSchema = json.RawMessage(`{`) }, "not a JSON object"},
		{"not an object schema", func(t *Tool) { t.InputSchema = json.RawMessage(`{"type":"array"}`) }, `"type":"object"`},
		{"unknown arguments allowed", func(t *Tool) {
			t.InputSchema = json.RawMessage(`{"type":"object","properties":{}}`)
		}, "additionalProperties"},
		{"property without description", func(t *Tool) {
			t.InputSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"x":{"type":"string"}}}`)
		}, `property "x" has no description`},
		{"old draft", func(t *Tool) {
			t.InputSchema = json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false}`)
		}, "Draft 2020-12"},
		{"remote $ref never fetched", func(t *Tool) {
			t.InputSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"x":{"$ref":"https://example.com/s.json","description":"x"}}}`)
		}, "does not compile"},
		{"timeout arg missing", func(t *Tool) { t.TimeoutArg = "deadline" }, "not in the input schema"},
		{"timeout arg not integer", func(t *Tool) {
			t.TimeoutArg = "x"
			t.InputSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"x":{"type":"string","description":"x"}}}`)
		}, "must be an integer"},
		{"negative timeout", func(t *Tool) { t.Timeout = -time.Second }, "negative timeout"},
	}
	for _, c := range cases {
		tl := valid()
		c.modify(&tl)
		err := NewRegistry("v").Add(tl)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want error containing %q, got %v", c.name, c.want, err)
		}
	}
	r := NewRegistry("v")
	if err := r.Add(valid()); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(valid()); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Fatalf("duplicate: %v", err)
	}
}

func TestRegistryListsSorted(t *testing.T) {
	r := NewRegistry("1.0+x")
	for _, n := range []string{"b", "c", "a"} {
		tl := valid()
		tl.Name = n
		if err := r.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, e := range r.List() {
		names = append(names, e.Name)
		d := e.Definition()
		if d.ToolingVersion != "1.0+x" || d.Meta[MetaSchemaVersion] != 1 || d.Meta[MetaToolingVersion] != "1.0+x" {
			t.Fatalf("definition versions: %+v", d)
		}
	}
	if strings.Join(names, ",") != "a,b,c" || r.Len() != 3 {
		t.Fatalf("order %v", names)
	}
	if _, found := r.Lookup("b"); !found {
		t.Fatal("lookup")
	}
}

func TestCheckArgs(t *testing.T) {
	r := NewRegistry("v")
	r.Add(valid())
	e, _ := r.Lookup("t")
	cases := []struct {
		args    string
		wantErr string
	}{
		{``, ""},
		{`null`, ""},
		{`{}`, ""},
		{`{"n":3}`, ""},
		{`{"n":0}`, "/n"},
		{`{"n":"3"}`, "/n"},
		{`{"m":1}`, "additional properties 'm'"},
		{`[1]`, "must be a JSON object"},
		{`"x"`, "must be a JSON object"},
	}
	for _, c := range cases {
		_, err := e.CheckArgs(json.RawMessage(c.args))
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected %v", c.args, err)
		case c.wantErr != "" && (err == nil || err.Code != InvalidRequest || !strings.Contains(err.Message, c.wantErr)):
			t.Errorf("%s: want INVALID_REQUEST containing %q, got %v", c.args, c.wantErr, err)
		}
	}
}

func TestCallTimeout(t *testing.T) {
	tl := valid()
	tl.Timeout = 3 * time.Second
	tl.TimeoutArg = "timeout_ms"
	r := NewRegistry("v")
	r.Add(tl)
	e, _ := r.Lookup("t")
	if d := e.CallTimeout(json.RawMessage(`{}`)); d != 3*time.Second {
		t.Fatalf("default %v", d)
	}
	if d := e.CallTimeout(json.RawMessage(`{"timeout_ms":250}`)); d != 250*time.Millisecond {
		t.Fatalf("override %v", d)
	}
	plain := valid()
	plain.Name = "p"
	r.Add(plain)
	p, _ := r.Lookup("p")
	if d := p.CallTimeout(json.RawMessage(`{"timeout_ms":5}`)); d != DefaultTimeout {
		t.Fatalf("a tool without TimeoutArg is not overridable: %v", d)
	}
}

func TestErrors(t *testing.T) {
	e := Errorf(NotFound, "no %s", "x").With("hint", "h")
	obj := e.Object()
	if obj["code"] != "NOT_FOUND" || obj["message"] != "no x" || obj["hint"] != "h" {
		t.Fatalf("%v", obj)
	}
	wrapped := errors.Join(errors.New("ctx"), e)
	if got, ok := AsError(wrapped); !ok || got != e {
		t.Fatal("AsError through a wrap")
	}
	se := StoreUnavailable("PostgreSQL")
	if se.Code != -32000 || se.Message != "Database connection failed. Please check PostgreSQL is running." {
		t.Fatalf("%+v", se)
	}
	if _, ok := AsRPCError(errors.Join(se)); !ok {
		t.Fatal("AsRPCError")
	}
	if !IsContextDone(context.DeadlineExceeded) || IsContextDone(errors.New("x")) {
		t.Fatal("IsContextDone")
	}
}

func TestArgMessages(t *testing.T) {
	tl := valid()
	tl.InputSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"text":{"type":"string","maxLength":5,"description":"t"}}}`)
	tl.ArgMessages = map[string]string{"/text maxLength": "content exceeds max length"}
	r := NewRegistry("v")
	if err := r.Add(tl); err != nil {
		t.Fatal(err)
	}
	e, _ := r.Lookup("t")
	_, err := e.CheckArgs(json.RawMessage(`{"text":"123456"}`))
	if err == nil || err.Message != "content exceeds max length" {
		t.Fatalf("override: %v", err)
	}
	_, err = e.CheckArgs(json.RawMessage(`{"text":5}`))
	if err == nil || !strings.Contains(err.Message, "/text") || err.Message == "content exceeds max length" {
		t.Fatalf("other violations keep the validator's words: %v", err)
	}
}

// An output schema is an object schema that compiles; tools/list carries it,
// and CheckResult holds a result to it.
func TestOutputSchema(t *testing.T) {
	for _, bad := range []string{`{"type":"array"}`, `[1]`, `{"type":"object","properties":{"a":{"$ref":"http://elsewhere/x"}}}`} {
		tl := valid()
		tl.OutputSchema = json.RawMessage(bad)
		if err := NewRegistry("x").Add(tl); err == nil || !strings.Contains(err.Error(), "outputSchema") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	tl := valid()
	tl.OutputSchema = Output(Prop("n", `{"type":"integer","description":"a count"}`).Required())
	r := NewRegistry("x")
	if err := r.Add(tl); err != nil {
		t.Fatal(err)
	}
	e, _ := r.Lookup("t")
	def, _ := json.Marshal(e.Definition())
	if !strings.Contains(string(def), `"outputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","required":["n"]`) {
		t.Errorf("definition: %s", def)
	}
	if err := e.CheckResult(json.RawMessage(`{"n":3,"more":true}`)); err != nil {
		t.Errorf("a valid result: %v", err)
	}
	for _, res := range []string{`{}`, `{"n":"3"}`, `{"n":1.5}`} {
		if err := e.CheckResult(json.RawMessage(res)); err == nil || !strings.Contains(err.Error(), "does not match its outputSchema") {
			t.Errorf("%s: %v", res, err)
		}
	}
	if err := (&Entry{}).CheckResult(json.RawMessage(`[]`)); err != nil {
		t.Errorf("no output schema: %v", err)
	}
}
