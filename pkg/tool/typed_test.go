package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/validate"
)

type mode string

// goodArgs is a struct that agrees with goodSchema: every shape of
// argument the families use.
type goodArgs struct {
	Query    string          `json:"query"`
	Limit    int             `json:"limit,omitempty"`   // default 10, but 0 is refused: no pointer needed
	Context  *int            `json:"context,omitempty"` // default 2, and 0 is valid: a pointer
	Repo     *string         `json:"repo_path,omitempty"`
	Mode     mode            `json:"mode,omitempty"`
	Confirm  bool            `json:"confirm"`
	Tags     []string        `json:"tags,omitempty"`
	Meta     *goodMeta       `json:"meta,omitempty"`
	Answers  map[string]any  `json:"answers,omitempty"`
	Asset    json.RawMessage `json:"asset,omitempty"`
	Ratio    float64         `json:"ratio,omitempty"`
	Regex    bool            `json:"regex,omitempty"` // default false: the zero value
	Deadline *int64          `json:"timeout_ms,omitempty"`
}

type goodMeta struct {
	Source string   `json:"source,omitempty"`
	Tags   []string `json:"tags,omitempty"`
}

var goodSchema = Object(
	Prop("query", `{"type":"string","minLength":1,"title":"Q","description":"q"}`).Required(),
	Limit(10, 100, "results"),
	Prop("context", `{"type":"integer","minimum":0,"maximum":10,"default":2,"title":"C","description":"c"}`),
	RepoPath,
	Prop("mode", `{"type":"string","enum":["a","b"],"title":"M","description":"m"}`),
	Prop("confirm", `{"type":"boolean","const":true,"title":"C","description":"c"}`).Required(),
	Prop("tags", `{"type":"array","items":{"type":"string"},"title":"T","description":"t"}`),
	Prop("meta", `{"anyOf":[{"type":"object","additionalProperties":false,"properties":{
		"source":{"type":"string","title":"S","description":"s"},
		"tags":{"type":"array","items":{"type":"string"},"title":"T","description":"t"}}},{"type":"null"}],"title":"M","description":"m"}`),
	Prop("answers", `{"anyOf":[{"type":"object","additionalProperties":true},{"type":"null"}],"title":"A","description":"a"}`),
	AnyValue("asset", "Asset", "a document"),
	Prop("ratio", `{"type":"number","title":"R","description":"r"}`),
	Prop("regex", `{"type":"boolean","default":false,"title":"R","description":"r"}`),
	TimeoutMS(time.Minute, time.Hour, "It stops."),
)

func typedTool(schema json.RawMessage, h HandlerFor[goodArgs, any]) Tool {
	return For(Tool{Name: "t", Description: "a typed tool", SchemaVersion: 1, InputSchema: schema, TimeoutArg: "timeout_ms"}, h)
}

// TestTypedToolBindsItsArguments: a typed tool's handler gets its
// arguments bound; one that does not fit is refused before it runs.
func TestTypedToolBindsItsArguments(t *testing.T) {
	var got goodArgs
	r := NewRegistry("v")
	if err := r.Add(typedTool(goodSchema, func(ctx context.Context, call *Call, in goodArgs) (any, error) {
		got = in
		return map[string]any{}, nil
	})); err != nil {
		t.Fatal(err)
	}
	e, _ := r.Lookup("t")
	if in, inPlace := e.Input(); in == nil || inPlace {
		t.Fatalf("Input: %v %v", in, inPlace)
	}
	run := func(args string) error {
		a, bad := e.Check(json.RawMessage(args))
		if bad != nil {
			return bad
		}
		_, err := e.Handler(context.Background(), NewCall("t", a.Raw, a.Doc, Client{}, nil))
		return err
	}
	if err := run(`{"query":"q","confirm":true,"limit":5e1,"context":0,"repo_path":null,"mode":"b","meta":{"tags":["x"]},"asset":[1, 2],"timeout_ms":6e4}`); err != nil {
		t.Fatal(err)
	}
	if got.Limit != 50 || got.Context == nil || *got.Context != 0 || got.Repo != nil || got.Mode != "b" || got.Meta.Tags[0] != "x" || string(got.Asset) != "[1, 2]" || *got.Deadline != 60000 {
		t.Fatalf("bound %+v", got)
	}
	if d := e.CallTimeout(json.RawMessage(`{"timeout_ms":6e4}`)); d != time.Minute {
		t.Fatalf("timeout %v", d)
	}
	got = goodArgs{}
	err := run(`{"query":"q","confirm":true,"timeout_ms":1e400}`)
	if te, ok := AsError(err); !ok || te.Code != InvalidRequest || !strings.Contains(te.Message, "/timeout_ms") || got.Query != "" {
		t.Fatalf("1e400 (past the maximum): %v, handler ran: %v", err, got.Query != "")
	}
}

// TestTypedToolSchemaDisagreements: the registry refuses a typed tool
// whose struct and schema disagree, whichever side is wrong.
func TestTypedToolSchemaDisagreements(t *testing.T) {
	ok := func(ctx context.Context, call *Call, in struct{}) (any, error) { return nil, nil }
	type (
		s1 struct {
			Query string `json:"query"`
		}
		s2 struct {
			Query string `json:"query"`
			Extra string `json:"extra,omitempty"`
		}
		sInt struct {
			Query int `json:"query"`
		}
		sPtr struct {
			Query *string `json:"query"`
		}
		sOmit struct {
			Query string `json:"query,omitempty"`
		}
		sPlain struct {
			Query string `json:"query"`
			N     int    `json:"n"`
		}
		sN struct {
			Query string `json:"query"`
			N     int    `json:"n,omitempty"`
		}
		sNum struct {
			Query string  `json:"query"`
			N     float64 `json:"n,omitempty"`
		}
		sAny struct {
			Query string `json:"query"`
			Doc   string `json:"doc,omitempty"`
		}
		inner  struct{ A string }
		sInner struct {
			Query string `json:"query"`
			Obj   *inner `json:"obj,omitempty"`
		}
		sItems struct {
			Query string `json:"query"`
			List  []int  `json:"list,omitempty"`
		}
		sMap struct {
			Query string         `json:"query"`
			Obj   map[string]int `json:"obj,omitempty"`
		}
		sNull struct {
			Query string `json:"query"`
			N     int    `json:"n,omitempty"`
		}
		Embedded struct {
			Query string `json:"query"`
		}
		sEmbed struct {
			Embedded
		}
		sUntagged struct{ Query string }
	)
	q := Prop("query", `{"type":"string","description":"q"}`).Required()
	cases := []struct {
		name   string
		tool   Tool
		want   string
		passes bool
	}{
		{"agrees", For(Tool{InputSchema: Object(q)}, func(ctx context.Context, c *Call, in s1) (any, error) { return nil, nil }), "", true},
		{"no arguments", For(Tool{InputSchema: Object()}, ok), "", true},
		{"property without a field", For(Tool{InputSchema: Object(q)}, ok), `property "query" has no field`, false},
		{"field without a property", For(Tool{InputSchema: Object(q)}, func(ctx context.Context, c *Call, in s2) (any, error) { return nil, nil }), `binds "extra", which is not a property`, false},
		{"untagged field", For(Tool{InputSchema: Object(q)}, func(ctx context.Context, c *Call, in sUntagged) (any, error) { return nil, nil }), `binds "Query"`, false},
		{"type mismatch", For(Tool{InputSchema: Object(q)}, func(ctx context.Context, c *Call, in sInt) (any, error) { return nil, nil }), "may be a string, which field type int cannot hold", false},
		{"integer field for a number", For(Tool{InputSchema: Object(q, Prop("n", `{"type":"number","description":"n"}`))}, func(ctx context.Context, c *Call, in sN) (any, error) { return nil, nil }), "may be a number, which field type int", false},
		{"float field for an integer", For(Tool{InputSchema: Object(q, Prop("n", `{"type":"integer","description":"n"}`))}, func(ctx context.Context, c *Call, in sNum) (any, error) { return nil, nil }), "", true},
		{"required on a pointer", For(Tool{InputSchema: Object(q)}, func(ctx context.Context, c *Call, in sPtr) (any, error) { return nil, nil }), "required property binds the pointer field", false},
		{"required on omitempty", For(Tool{InputSchema: Object(q)}, func(ctx context.Context, c *Call, in sOmit) (any, error) { return nil, nil }), "tagged omitempty", false},
		{"optional on a plain field", For(Tool{InputSchema: Object(q, Prop("n", `{"type":"integer","description":"n"}`))}, func(ctx context.Context, c *Call, in sPlain) (any, error) { return nil, nil }), "neither a pointer nor tagged omitempty", false},
		{"optional, required by the struct", For(Tool{InputSchema: Object(q, Prop("n", `{"type":"integer","description":"n"}`).Required())}, func(ctx context.Context, c *Call, in sN) (any, error) { return nil, nil }), "tagged omitempty", false},
		{"a default the binder fills: a plain field holds it", For(Tool{InputSchema: Object(q, Prop("n", `{"type":"integer","minimum":0,"default":2,"description":"n"}`))}, func(ctx context.Context, c *Call, in sPlain) (any, error) { return nil, nil }), "", true},
		{"default, zero refused", For(Tool{InputSchema: Object(q, Prop("n", `{"type":"integer","minimum":1,"default":2,"description":"n"}`))}, func(ctx context.Context, c *Call, in sN) (any, error) { return nil, nil }), "", true},
		{"default is the zero value", For(Tool{InputSchema: Object(q, Prop("n", `{"type":"integer","default":0,"description":"n"}`))}, func(ctx context.Context, c *Call, in sN) (any, error) { return nil, nil }), "", true},
		{"any value in a string", For(Tool{InputSchema: Object(q, AnyValue("doc", "D", "d"))}, func(ctx context.Context, c *Call, in sAny) (any, error) { return nil, nil }), "takes any JSON value", false},
		{"untyped property in a string", For(Tool{InputSchema: Object(q, Prop("doc", `{"description":"d"}`))}, func(ctx context.Context, c *Call, in sAny) (any, error) { return nil, nil }), "takes any JSON value", false},
		{"nested field without a property", For(Tool{InputSchema: Object(q, Prop("obj", `{"type":"object","properties":{"b":{"type":"string"}},"description":"o"}`))}, func(ctx context.Context, c *Call, in sInner) (any, error) { return nil, nil }), `obj: field A of tool.inner binds "A"`, false},
		{"items mismatch", For(Tool{InputSchema: Object(q, Prop("list", `{"type":"array","items":{"type":"string"},"description":"l"}`))}, func(ctx context.Context, c *Call, in sItems) (any, error) { return nil, nil }), "list.*: the property may be a string", false},
		{"map values mismatch", For(Tool{InputSchema: Object(q, Prop("obj", `{"type":"object","additionalProperties":{"type":"string"},"description":"o"}`))}, func(ctx context.Context, c *Call, in sMap) (any, error) { return nil, nil }), "obj.*: the property may be a string", false},
		{"nullable on a plain field", For(Tool{InputSchema: Object(q, Prop("n", `{"anyOf":[{"type":"integer"},{"type":"null"}],"description":"n"}`))}, func(ctx context.Context, c *Call, in sNull) (any, error) { return nil, nil }), "", true},
		{"nullable mismatch", For(Tool{InputSchema: Object(q, Prop("n", `{"anyOf":[{"type":"string"},{"type":"null"}],"description":"n"}`))}, func(ctx context.Context, c *Call, in sNull) (any, error) { return nil, nil }), "may be a string", false},
		{"embedded struct", For(Tool{InputSchema: Object(q)}, func(ctx context.Context, c *Call, in sEmbed) (any, error) { return nil, nil }), "embedded field Embedded", false},
		{"not a struct", For(Tool{InputSchema: Object()}, func(ctx context.Context, c *Call, in []string) (any, error) { return nil, nil }), "not a struct", false},
		{"in place, agrees", ForDoc[s1](Tool{InputSchema: Object(q)}, func(ctx context.Context, c *Call) (any, error) { return nil, nil }), "", true},
		{"in place, disagrees", ForDoc[s2](Tool{InputSchema: Object(q)}, func(ctx context.Context, c *Call) (any, error) { return nil, nil }), `"extra"`, false},
		{"timeout default not the tool's", For(Tool{InputSchema: Object(TimeoutMS(time.Minute, time.Hour, "x")), TimeoutArg: "timeout_ms", Timeout: time.Second}, func(ctx context.Context, c *Call, in struct {
			T *int `json:"timeout_ms"`
		}) (any, error) {
			return nil, nil
		}), "defaults to 60000 ms, but the tool's timeout is 1s", false},
	}
	for _, c := range cases {
		c.tool.Name, c.tool.Description, c.tool.SchemaVersion = "t", "a tool", 1
		err := NewRegistry("v").Add(c.tool)
		switch {
		case c.passes && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !c.passes && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: want an error containing %q, got %v", c.name, c.want, err)
		}
	}
}

// TestTwoFieldsOneProperty: two fields may not bind one property (go vet
// refuses such a struct in source; reflect builds one).
func TestTwoFieldsOneProperty(t *testing.T) {
	str := reflect.TypeFor[string]()
	dup := reflect.StructOf([]reflect.StructField{{Name: "A", Type: str, Tag: `json:"query"`}, {Name: "B", Type: str, Tag: `json:"query"`}})
	schema := Object(Prop("query", `{"type":"string","description":"q"}`).Required())
	sch := mustCompileSchema(t, schema)
	if err := checkInput(schema, dup, sch); err == nil || !strings.Contains(err.Error(), `both bind "query"`) {
		t.Fatalf("got %v", err)
	}
}

func mustCompileSchema(t *testing.T, schema json.RawMessage) *validate.Schema {
	t.Helper()
	doc, err := validate.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := validate.NewCompiler(refuseLoader{})
	if err := c.AddResource("mem:///s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///s.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestForDocReadsInPlace: ForDoc's handler reads the decoded arguments;
// nothing is bound, so nothing is copied.
func TestForDocReadsInPlace(t *testing.T) {
	type in struct {
		Asset any `json:"asset"`
	}
	r := NewRegistry("v")
	var asset string
	err := r.Add(ForDoc[in](Tool{Name: "v", Description: "d", SchemaVersion: 1, InputSchema: Object(AnyValue("asset", "A", "a").Required())},
		func(ctx context.Context, call *Call) (any, error) {
			d, err := call.Doc()
			if err != nil {
				return nil, err
			}
			asset, _ = d.Raw(d.Get(d.Root(), "asset"))
			return map[string]any{}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	e, _ := r.Lookup("v")
	if _, inPlace := e.Input(); !inPlace {
		t.Fatal("not in place")
	}
	a, bad := e.Check(json.RawMessage(`{"asset": {"big": [1e400]} }`))
	if bad != nil {
		t.Fatal(bad)
	}
	if _, err := e.Handler(context.Background(), NewCall("v", a.Raw, a.Doc, Client{}, nil)); err != nil || asset != `{"big": [1e400]}` {
		t.Fatalf("%v %q", err, asset)
	}
}

func TestObjectSchema(t *testing.T) {
	got := string(Object(Prop("b", `{ "type": "string" }`), Prop("a", `{"type":"integer"}`).Required()))
	want := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"required":["a"],"properties":{"b":{"type":"string"},"a":{"type":"integer"}}}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := string(Object()); got != `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"properties":{}}` {
		t.Fatalf("no properties: %s", got)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `property "x"`) {
			t.Fatalf("a property that is not a JSON object: %v", r)
		}
	}()
	Object(Prop("x", `"string"`))
}

// The binder fills in the default of an argument the call leaves out, and
// only then: an explicit value, the zero value included, is the caller's.
func TestDefaultsAreFilled(t *testing.T) {
	type in struct {
		N    int      `json:"n"`
		Mode *string  `json:"mode,omitempty"`
		Tags []string `json:"tags,omitempty"`
	}
	var got in
	tl := For(Tool{Name: "d", Description: "d", SchemaVersion: 1, InputSchema: Object(
		Prop("n", `{"type":"integer","default":2,"description":"n"}`),
		Prop("mode", `{"type":"string","default":"all","description":"m"}`),
		Prop("tags", `{"type":"array","items":{"type":"string"},"default":["x"],"description":"t"}`))},
		func(ctx context.Context, c *Call, a in) (any, error) { got = a; return map[string]any{}, nil })
	r := NewRegistry("x")
	if err := r.Add(tl); err != nil {
		t.Fatal(err)
	}
	e, _ := r.Lookup("d")
	for args, want := range map[string]string{
		`{}`:                                 `{2 all [x]}`,
		`{"n":0}`:                            `{0 all [x]}`,
		`{"n":5,"mode":"one","tags":[]}`:     `{5 one []}`,
		`{"mode":"","tags":["a","b"],"n":1}`: `{1  [a b]}`,
	} {
		a, cerr := e.Check(json.RawMessage(args))
		if cerr != nil {
			t.Fatal(cerr)
		}
		got = in{}
		if _, err := e.Handler(context.Background(), NewCall("d", a.Raw, a.Doc, Client{}, nil)); err != nil {
			t.Fatal(err)
		}
		mode := "<nil>"
		if got.Mode != nil {
			mode = *got.Mode
		}
		if s := fmt.Sprintf("{%d %s %v}", got.N, mode, got.Tags); s != want {
			t.Errorf("%s: bound %s, want %s", args, s, want)
		}
	}
}
