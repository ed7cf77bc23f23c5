package tool

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/validate"
)

// bindCall binds args (checked against no schema) into v through a Call,
// as a handler does.
func bindCall(t *testing.T, args string, v any) *Error {
	t.Helper()
	err := NewCall("t", json.RawMessage(args), nil, Client{}, nil).Bind(v)
	if err == nil {
		return nil
	}
	te, ok := AsError(err)
	if !ok {
		t.Fatalf("%s: a bind error that is not a tool error: %v", args, err)
	}
	return te
}

// goWords are what encoding/json's errors said and a bind error must not:
// Go's type names and its own wording.
var goWords = []string{"int", "uint", "float", "struct", "unmarshal", "Go ", "[]", "map[", "interface", "json:"}

func noGoWords(t *testing.T, what string, e *Error) {
	t.Helper()
	b, _ := json.Marshal(e.Object())
	msg := strings.ReplaceAll(string(b), "an integer", "")
	for _, w := range goWords {
		if strings.Contains(msg, w) {
			t.Errorf("%s: the error names Go's %q: %s", what, w, b)
		}
	}
}

// TestBindNumberForms: every spelling of an integral number binds to an
// integer argument; one that does not fit is "number out of range" at its
// path, and the error is the contract's, not encoding/json's.
func TestBindNumberForms(t *testing.T) {
	million := strings.Repeat("7", 1_000_000)
	for _, c := range []struct {
		lit  string
		want int64
		err  string // "" when it binds
	}{
		{"50", 50, ""},
		{"50.0", 50, ""},
		{"5e1", 50, ""},
		{"5E+1", 50, ""},
		{"5.0e1", 50, ""},
		{"500e-1", 50, ""},
		{"0.05e3", 50, ""},
		{"50.000000000000000000000000000000", 50, ""},
		{"-0", 0, ""},
		{"-0.0e-7", 0, ""},
		{"0e99999999999999999999", 0, ""},
		{"-50.0", -50, ""},
		{"9223372036854775807", math.MaxInt64, ""},
		{"-9223372036854775808", math.MinInt64, ""},
		{"9.223372036854775807e18", math.MaxInt64, ""},
		{"1e400", 0, "number out of range"},
		{"-1e400", 0, "number out of range"},
		{"1e99999999999999999999", 0, "number out of range"},
		{"9223372036854775808", 0, "number out of range"},
		{"-9223372036854775809", 0, "number out of range"},
		{"18446744073709551616", 0, "number out of range"},
		{million, 0, "number out of range"},
		{"50.5", 0, "must be an integer"},
		{"5e-1", 0, "must be an integer"},
		{"1e-400", 0, "must be an integer"},
		{`"50"`, 0, "must be an integer"},
		{`true`, 0, "must be an integer"},
	} {
		var a struct {
			N int64 `json:"n"`
		}
		e := bindCall(t, `{"n":`+c.lit+`}`, &a)
		switch {
		case c.err == "" && e != nil:
			t.Errorf("%.20s: %v", c.lit, e)
		case c.err == "" && a.N != c.want:
			t.Errorf("%.20s: bound %d, want %d", c.lit, a.N, c.want)
		case c.err != "" && (e == nil || e.Code != InvalidRequest || !strings.Contains(e.Message, "/n: "+c.err)):
			t.Errorf("%.20s: want INVALID_REQUEST %q at /n, got %v", c.lit, c.err, e)
		case c.err != "":
			vs, _ := e.Fields["errors"].([]validate.Violation)
			if len(vs) != 1 || vs[0].Path != "/n" || vs[0].Msg != c.err {
				t.Errorf("%.20s: errors %v", c.lit, e.Fields["errors"])
			}
			noGoWords(t, c.lit, e)
		}
	}
}

// TestBindIntegerKinds: each integer kind takes what fits it.
func TestBindIntegerKinds(t *testing.T) {
	for _, c := range []struct {
		v        any // a pointer to the field's type
		lit      string
		fits     bool
		wantText string
	}{
		{new(int8), "127", true, "127"},
		{new(int8), "1.27e2", true, "127"},
		{new(int8), "128", false, ""},
		{new(int8), "-128.0", true, "-128"},
		{new(int32), "2147483648", false, ""},
		{new(uint8), "255", true, "255"},
		{new(uint8), "256", false, ""},
		{new(uint), "-1", false, ""},
		{new(uint), "-0", true, "0"},
		{new(uint64), "18446744073709551615", true, "18446744073709551615"},
		{new(uint64), "1.8446744073709551615e19", true, "18446744073709551615"},
		{new(uint64), "18446744073709551616", false, ""},
		{new(float64), "1e400", false, ""},
		{new(float64), "2.5", true, "2.5"},
		{new(float32), "1e39", false, ""},
	} {
		target := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "N", Type: reflect.TypeOf(c.v).Elem(), Tag: `json:"n"`}}))
		e := bindCall(t, `{"n":`+c.lit+`}`, target.Interface())
		got := fmt.Sprint(target.Elem().Field(0).Interface())
		switch {
		case c.fits && (e != nil || got != c.wantText):
			t.Errorf("%T %s: bound %s, %v; want %s", c.v, c.lit, got, e, c.wantText)
		case !c.fits && (e == nil || !strings.Contains(e.Message, "/n: number out of range")):
			t.Errorf("%T %s: want out of range, got %s, %v", c.v, c.lit, got, e)
		case !c.fits:
			noGoWords(t, c.lit, e)
		}
	}
}

// TestBindKinds: what each kind takes, null, nested paths, raw text and
// encoding/json's matching of names.
func TestBindKinds(t *testing.T) {
	type inner struct {
		Tags []string `json:"tags"`
		When time.Time
	}
	type args struct {
		S     string          `json:"s"`
		P     *string         `json:"p"`
		B     bool            `json:"b"`
		F     float64         `json:"f"`
		Any   any             `json:"any"`
		Raw   json.RawMessage `json:"raw"`
		Num   json.Number     `json:"num"`
		M     map[string]any  `json:"m"`
		In    *inner          `json:"in"`
		Arr   [2]int          `json:"arr"`
		Plain string
		Skip  string `json:"-"`
		lower string
	}
	var a args
	a.S = "kept"
	in := `{"s":null,"p":"x","b":true,"f":1e2,"any":[1,"a",{"k":null}],"raw": { "z" : [1, 2.50] },"num":1.50e3,` +
		`"m":{"a":1,"b":[true]},"in":{"tags":["x","y"],"When":"2026-01-02T03:04:05Z"},"arr":[1,2e0,3],"PLAIN":"c","Skip":"no","lower":"no"}`
	if e := bindCall(t, in, &a); e != nil {
		t.Fatal(e)
	}
	if a.S != "kept" || *a.P != "x" || !a.B || a.F != 100 || a.Num != "1.50e3" || a.Plain != "c" || a.Skip != "" || a.lower != "" {
		t.Errorf("scalars: %+v", a)
	}
	if !reflect.DeepEqual(a.Any, []any{1.0, "a", map[string]any{"k": nil}}) || !reflect.DeepEqual(a.M, map[string]any{"a": 1.0, "b": []any{true}}) {
		t.Errorf("interfaces: %#v %#v", a.Any, a.M)
	}
	if string(a.Raw) != `{ "z" : [1, 2.50] }` {
		t.Errorf("raw text as written: %s", a.Raw)
	}
	if a.In == nil || !reflect.DeepEqual(a.In.Tags, []string{"x", "y"}) || a.In.When.Year() != 2026 || a.Arr != [2]int{1, 2} {
		t.Errorf("nested: %+v %v", a.In, a.Arr)
	}
	var n args
	n.P, n.M, n.In = new(string), map[string]any{}, &inner{}
	if e := bindCall(t, `{"p":null,"m":null,"in":null,"raw":null}`, &n); e != nil || n.P != nil || n.M != nil || n.In != nil || string(n.Raw) != "null" {
		t.Errorf("null: %+v %v", n, e)
	}
	for in, want := range map[string]string{
		`{"s":1}`:                               "/s: must be a string",
		`{"b":"true"}`:                          "/b: must be a boolean",
		`{"f":"1"}`:                             "/f: must be a number",
		`{"m":[1]}`:                             "/m: must be an object",
		`{"in":{"tags":["x",2]}}`:               "/in/tags/1: must be a string",
		`{"in":{"tags":{}}}`:                    "/in/tags: must be an array",
		`{"in":{"When":"yesterday"}}`:           "/in/When: is not a valid value",
		`{"any":{"a/b":[0,1e400]}}`:             "/any/a~1b/1: number out of range",
		`{"arr":[1,1.5]}`:                       "/arr/1: must be an integer",
		`{"in":{"tags":["x"]},"s":{"deep":[]}}`: "/s: must be a string",
	} {
		var a args
		e := bindCall(t, in, &a)
		if e == nil || e.Code != InvalidRequest || e.Message != "invalid arguments for t: "+want {
			t.Errorf("%s: want %q, got %v", in, want, e)
			continue
		}
		noGoWords(t, in, e)
	}
}

func TestCallTimeoutNumberForms(t *testing.T) {
	tl := valid()
	tl.Timeout = 3 * time.Second
	tl.TimeoutArg = "timeout_ms"
	r := NewRegistry("v")
	if err := r.Add(tl); err != nil {
		t.Fatal(err)
	}
	e, _ := r.Lookup("t")
	for args, want := range map[string]time.Duration{
		`{"timeout_ms":250}`:                    250 * time.Millisecond,
		`{"timeout_ms":250.0}`:                  250 * time.Millisecond,
		`{"timeout_ms":2.5e2}`:                  250 * time.Millisecond,
		`{"timeout_ms":6e5}`:                    10 * time.Minute,
		`{"timeout_ms":0}`:                      3 * time.Second,
		`{"timeout_ms":-5}`:                     3 * time.Second,
		`{"timeout_ms":1e400}`:                  math.MaxInt64,
		`{"timeout_ms":9223372036854775807000}`: math.MaxInt64,
	} {
		if d := e.CallTimeout(json.RawMessage(args)); d != want {
			t.Errorf("%s: %v, want %v", args, d, want)
		}
	}
}
