package envelope

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// absent marks a member the envelope must not have (ID or Params nil).
const absent = "<absent>"

func TestScanGood(t *testing.T) {
	big := `{"content":[{"type":"text","text":"` + strings.Repeat(`x\"y\\z\n\u00e9 `, 20000) + `"}],"isError":false}`
	deep := strings.Repeat(`{"a":[`, 2000) + strings.Repeat(`]}`, 2000)
	cases := []struct {
		in      string
		id      string
		method  string
		result  bool
		error   bool
		params  string
		kind    Kind
		comment string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `1`, "ping", false, false, absent, Request, "plain request"},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, absent, "notifications/initialized", false, false, absent, Notification, "notification"},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, `"a"`, "", true, false, absent, Response, "result"},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"x"}}`, `7`, "", false, true, absent, Response, "error"},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}`, `null`, "", false, true, absent, Invalid, "null id kept as written"},
		{`{}`, absent, "", false, false, absent, Invalid, "empty object"},
		{" \t\r\n{ \"id\" :\t2 , \"method\"\n:\r\"x\" } \r\n", `2`, "x", false, false, absent, Request, "whitespace everywhere"},
		{`{"id":1,"method":"m","params":{"a":[1,2,{"b":null}]}}`, `1`, "m", false, false, `{"a":[1,2,{"b":null}]}`, Request, "params kept as written"},
		{`{"id":1,"method":"m","params": [ 1 , 2 ] }`, `1`, "m", false, false, `[ 1 , 2 ]`, Request, "params with inner space"},
		{`{"id":1,"method":"m","params":null}`, `1`, "m", false, false, `null`, Request, "params null is present"},
		{`{"\u0069d":5,"m\u0065thod":"x","\u0070arams":{}}`, `5`, "x", false, false, `{}`, Request, "escaped keys"},
		{`{"\u0069\u0064":5,"\u0072esult":1}`, `5`, "", true, false, absent, Response, "fully escaped key"},
		{`{"i\/d":5,"result":1}`, absent, "", true, false, absent, Invalid, `"i/d" is not "id"`},
		{`{"ID":5,"Method":"x"}`, absent, "", false, false, absent, Invalid, "names are case-sensitive"},
		{`{"id ":5,"method":"x"}`, absent, "x", false, false, absent, Notification, "a space makes another name"},
		{`{"id":1,"id":"two","method":"a","method":"b"}`, `"two"`, "b", false, false, absent, Invalid, "a repeated id: last kept, invalid"},
		{`{"method":"a","method":7,"id":1}`, `1`, "", false, false, absent, Invalid, "last method is not a string"},
		{`{"method":7,"method":"a","id":1}`, `1`, "a", false, false, absent, Invalid, "a repeated method: invalid"},
		{`{"jsonrpc":"2.0","id":5,"id":99,"result":{}}`, `99`, "", true, false, absent, Invalid, "an id written twice, once escaped"},
		{`{"id":5,"result":{},"result":{}}`, `5`, "", true, false, absent, Invalid, "a repeated result"},
		{`{"id":5,"method":"m","params":{},"params":[]}`, `5`, "m", false, false, `[]`, Invalid, "repeated params"},
		{`{"jsonrpc":"2.0","jsonrpc":"2.0","method":"m"}`, absent, "m", false, false, absent, Invalid, "a repeated jsonrpc"},
		{`{"id":5,"method":"m","x":1,"x":2}`, `5`, "m", false, false, absent, Request, "another member may repeat"},
		{`{"id":1,"method":"a\"b\\c\/d\u00e9\ud83d\ude00"}`, `1`, "a\"b\\c/dé😀", false, false, absent, Request, "escaped method"},
		{`{"id":1,"method":"\ud800x"}`, `1`, "\uFFFDx", false, false, absent, Request, "lone surrogate as encoding/json"},
		{`{"id":"a\"b\\","method":"m"}`, `"a\"b\\"`, "m", false, false, absent, Request, "id with escaped quote and backslash"},
		{`{"id":1,"result":1,"error":{}}`, `1`, "", true, true, absent, Invalid, "result and error"},
		{`{"result":1}`, absent, "", true, false, absent, Invalid, "response without id"},
		{`{"id":1}`, `1`, "", false, false, absent, Invalid, "id alone"},
		{`{"id":1.5,"method":"m"}`, `1.5`, "m", false, false, absent, Invalid, "fraction id"},
		{`{"id":1e3,"method":"m"}`, `1e3`, "m", false, false, absent, Invalid, "exponent id"},
		{`{"id":-0,"method":"m"}`, `-0`, "m", false, false, absent, Request, "-0 is an integer"},
		{`{"id":{"a":1},"method":"m"}`, `{"a":1}`, "m", false, false, absent, Invalid, "object id"},
		{`{"id":true,"result":1}`, `true`, "", true, false, absent, Invalid, "bool id"},
		{`{"id":123456789012345678901234567890,"result":1}`, `123456789012345678901234567890`, "", true, false, absent, Response, "huge integer id"},
		{`{"id":9,"result":` + big + `}`, `9`, "", true, false, absent, Response, "large result with escapes"},
		{`{"id":9,"result":` + deep + `,"method":"late"}`, `9`, "late", true, false, absent, Request, "deeply nested value skipped; a method makes a request"},
		{`{"a":[0,-0,1,-1,0.5,-0.5,1e5,1E5,1e+5,1e-5,1.25E-10,-12.5e+3,123456789012345678901234567890],"id":1,"method":"n"}`, `1`, "n", false, false, absent, Request, "numbers"},
		{`{"a":[true,false,null,"",{},[],[{}],{"":""}],"method":"lit"}`, absent, "lit", false, false, absent, Notification, "literals and empties"},
		{"{\"method\":\"x\",\"s\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}", absent, "x", false, false, absent, Notification, "UTF-8 in a skipped string"},
		{`{"method":"x","s":"\u0000\b\f\n\r\t\/"}`, absent, "x", false, false, absent, Notification, "every escape"},
	}
	for _, c := range cases {
		t.Run(c.comment, func(t *testing.T) {
			e, ok := Scan([]byte(c.in))
			if !ok {
				t.Fatalf("not ok: %.200s", c.in)
			}
			if got := rawOr(e.ID); got != c.id {
				t.Errorf("id %s, want %s", got, c.id)
			}
			if e.Method != c.method {
				t.Errorf("method %q, want %q", e.Method, c.method)
			}
			if e.HasResult != c.result || e.HasError != c.error {
				t.Errorf("result %v error %v, want %v %v", e.HasResult, e.HasError, c.result, c.error)
			}
			if got := rawOr(e.Params); got != c.params {
				t.Errorf("params %s, want %s", got, c.params)
			}
			if e.Kind() != c.kind {
				t.Errorf("kind %v, want %v", e.Kind(), c.kind)
			}
			if !json.Valid([]byte(c.in)) {
				t.Errorf("the case is not valid JSON")
			}
		})
	}
}

func rawOr(b []byte) string {
	if b == nil {
		return absent
	}
	return string(b)
}

func TestScanBad(t *testing.T) {
	cases := map[string]string{
		"empty":                     ``,
		"space only":                " \n",
		"array":                     `[{"id":1,"method":"x"}]`,
		"empty batch":               `[]`,
		"string":                    `"x"`,
		"number":                    `1`,
		"null":                      `null`,
		"trailing garbage":          `{"id":1,"method":"x"}x`,
		"two objects":               `{"id":1}{"id":2}`,
		"trailing comma in object":  `{"id":1,}`,
		"trailing comma in array":   `{"a":[1,]}`,
		"leading comma":             `{,"id":1}`,
		"unterminated object":       `{"id":1`,
		"unterminated string":       `{"id":"1}`,
		"unterminated nested":       `{"a":{"b":[1,2}`,
		"mismatched close":          `{"a":[1}`,
		"missing colon":             `{"id" 1}`,
		"missing value":             `{"id":}`,
		"unquoted key":              `{id:1}`,
		"single quotes":             `{'id':1}`,
		"key not a string":          `{1:1}`,
		"bad escape":                `{"a":"\x"}`,
		"bad unicode escape":        `{"a":"\u12G4"}`,
		"short unicode escape":      `{"a":"\u12"}`,
		"bad escape in key":         `{"\q":1}`,
		"raw control character":     "{\"a\":\"x\ty\"}",
		"raw newline in string":     "{\"a\":\"x\ny\"}",
		"leading zero":              `{"a":01}`,
		"plus sign":                 `{"a":+1}`,
		"bare minus":                `{"a":-}`,
		"dot without digits":        `{"a":1.}`,
		"leading dot":               `{"a":.5}`,
		"exponent without digits":   `{"a":1e}`,
		"exponent sign only":        `{"a":1e+}`,
		"hex":                       `{"a":0x10}`,
		"NaN":                       `{"a":NaN}`,
		"Infinity":                  `{"a":-Infinity}`,
		"truncated literal":         `{"a":tru}`,
		"literal with suffix":       `{"a":truex}`,
		"capitalised literal":       `{"a":True}`,
		"invalid UTF-8 in value":    "{\"method\":\"x\",\"a\":\"\xff\"}",
		"invalid UTF-8 in key":      "{\"\xc3\":1}",
		"truncated UTF-8":           "{\"a\":\"\xe2\x82\"}",
		"UTF-8 surrogate":           "{\"a\":\"\xed\xa0\x80\"}",
		"invalid UTF-8 outside":     "{\"a\":1}\xff",
		"non-breaking space around": "\u00a0{\"a\":1}",
		"NUL after":                 "{\"a\":1}\x00",
		"comment":                   `{"a":1 /* c */}`,
	}
	for name, in := range cases {
		if e, ok := Scan([]byte(in)); ok {
			t.Errorf("%s: %q accepted as %+v", name, in, e)
		}
	}
}

// TestDepth: nesting to MaxDepth (the frame's object included) is accepted,
// one more refused, as encoding/json does.
func TestDepth(t *testing.T) {
	for _, d := range []int{MaxDepth - 1, MaxDepth, MaxDepth + 1, 100000} {
		for _, open := range []string{"[", `{"k":`} {
			closer := "]"
			if open != "[" {
				closer = "}"
			}
			inner := d - 1 // the frame's object is one level
			in := `{"id":1,"result":` + strings.Repeat(open, inner) + "0" + strings.Repeat(closer, inner) + `}`
			_, ok := Scan([]byte(in))
			if want := json.Valid([]byte(in)); ok != want || ok != (d <= MaxDepth) {
				t.Errorf("depth %d with %s: ok %v, json.Valid %v", d, open, ok, want)
			}
		}
	}
}

func TestScanAllocations(t *testing.T) {
	reply := []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	if n := testing.AllocsPerRun(100, func() { Scan(reply) }); n != 0 {
		t.Errorf("a reply costs %v allocations", n)
	}
	req := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"search"}}`)
	if n := testing.AllocsPerRun(100, func() { Scan(req) }); n > 1 {
		t.Errorf("a request costs %v allocations", n)
	}
	deep := []byte(`{"id":1,"result":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`)
	if n := testing.AllocsPerRun(20, func() { Scan(deep) }); n > 3 {
		t.Errorf("a deep reply costs %v allocations", n)
	}
}

// keyCases are id texts whose Key must equal refKey's: every user of the
// one id key (the daemon's session, the shim's relay, the handoff tracker,
// the hosted router) keys ids by Key, so this table is theirs.
var keyCases = []string{
	``, ` `, `1`, `"1"`, ` 1 `, " \"1\"\n", `-7`, `0`, `1.5`, `1e3`, `123456789012345678901234567890`,
	`null`, `true`, `{}`, `[1]`, `"a"`, `""`, `"\u00e9"`, `"é"`, `"a\"b"`, `"a\\b"`, `"\/"`,
	`"\b\f\n\r\t"`, `"\ud83d\ude00"`, `"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, `"\ud800\ud800\udc00"`,
	`"\u0000"`, "\"\xff\"", "\"a\xc3\"", "\"\xed\xa0\x80\"", `"unterminated`, `"bad \x escape"`,
	`"a" "b"`, `"a"x`, `"a" `, "\"a\"\u00a0", "\u00a0\"a\"", "\u2028\"a\"\u3000", `"a` + "\t" + `b"`,
	`x`, `1 2`, `"`, `"\u12"`, `"\uD83D\uDE00\uD83D"`, "\"\u00a0\"", "\"a\" \x85",
}

// refKey is the rule of docs/decisions/0030-ids-keep-their-type.md written
// with encoding/json as the reference decode: a string id's value between
// quotes, any other text as written, "" for empty or malformed text.
func refKey(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] != '"' {
		return string(raw)
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return `"` + s + `"`
}

func TestKeyAgreesWithReference(t *testing.T) {
	for _, c := range keyCases {
		if got, want := Key([]byte(c)), refKey([]byte(c)); got != want {
			t.Errorf("Key(%q) = %q, reference %q", c, got, want)
		}
	}
	// 1 and "1" are two requests (ids keep their JSON type); "\u0031" and
	// "1" are one.
	if Key([]byte(`1`)) == Key([]byte(`"1"`)) {
		t.Error(`1 and "1" have one key`)
	}
	if Key([]byte(`"\u0031"`)) != Key([]byte(`"1"`)) {
		t.Error(`"\u0031" and "1" have two keys`)
	}
}

// FuzzScanAgreesWithEncodingJSON: Scan accepts exactly the JSON objects
// json.Valid accepts that are also valid UTF-8 (its one deliberate
// strictness), and reads the same id, method and members as decoding the
// object with encoding/json does. Key agrees with the reference decode
// (refKey) on any input; FuzzScanAgreesWithParse (in the external test
// package: jsonrpc imports this one) checks the envelope against jsonrpc.Parse.
func FuzzScanAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","result":{"x":[1,2.5e3,null,true,false,"\"\\"]}}`,
		`{"id":null,"error":{}}`,
		`{"\u0069d":1,"method":"\ud83d\ude00","params":[]}`,
		`{"id":1,"id":2,"method":"a","method":3}`,
		`[{"id":1}]`,
		`{"a":01}`,
		"{\"a\":\"\xff\"}",
		`{"a":"\ud800"}`,
		` {"params":{"a":{"b":[[]]}}} ` + "\r\n",
		`{"id":1}x`,
		`{"id":-0.0e-0}`,
	} {
		f.Add([]byte(s))
	}
	for _, c := range keyCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if got, want := Key(in), refKey(in); got != want {
			t.Fatalf("Key(%q) = %q, reference %q", in, got, want)
		}
		e, ok := Scan(in)
		h := ScanHead(in[:len(in)/2]) // a head never panics
		if h.ID != nil && !json.Valid(h.ID) {
			t.Fatalf("%q: ScanHead of its first half read id %q", in, h.ID)
		}
		if h = ScanHead(in); ok && (string(h.ID) != string(e.ID) || h.Method != e.Method || h.HasMethod() != e.HasMethod() ||
			h.HasResult != e.HasResult || h.HasError != e.HasError || string(h.Params) != string(e.Params)) {
			t.Fatalf("%q: ScanHead of the whole frame %+v, Scan %+v", in, h, e)
		}
		trimmed := bytes.TrimLeft(in, " \t\r\n")
		object := json.Valid(in) && len(trimmed) > 0 && trimmed[0] == '{'
		if !object || !utf8.Valid(in) {
			if ok {
				t.Fatalf("%q: accepted (json.Valid %v, UTF-8 %v) as %+v", in, json.Valid(in), utf8.Valid(in), e)
			}
			return
		}
		if !ok {
			t.Fatalf("%q: a valid object refused", in)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(in, &m); err != nil {
			t.Fatalf("%q: encoding/json: %v", in, err)
		}
		sameRaw(t, in, "id", m, e.ID)
		sameRaw(t, in, "params", m, e.Params)
		_, hasResult := m["result"]
		_, hasError := m["error"]
		if e.HasResult != hasResult || e.HasError != hasError {
			t.Fatalf("%q: result %v error %v, encoding/json %v %v", in, e.HasResult, e.HasError, hasResult, hasError)
		}
		var method string
		rawMethod, hasMethod := m["method"]
		isString := hasMethod && rawMethod[0] == '"'
		if isString {
			if err := json.Unmarshal(rawMethod, &method); err != nil {
				t.Fatal(err)
			}
		}
		if e.Method != method || (e.method == methodAbsent) == hasMethod || (e.method == methodString) != isString {
			t.Fatalf("%q: method %q (%d), encoding/json %q (present %v)", in, e.Method, e.method, method, hasMethod)
		}
		if e.ID != nil && Key(e.ID) != refKey(e.ID) {
			t.Fatalf("%q: Key differs", in)
		}
	})
}

func sameRaw(t *testing.T, in []byte, name string, m map[string]json.RawMessage, got []byte) {
	t.Helper()
	want, present := m[name]
	if (got != nil) != present {
		t.Fatalf("%q: %s present %v, encoding/json %v", in, name, got != nil, present)
	}
	if !present {
		return
	}
	var a, b bytes.Buffer
	if err := json.Compact(&a, got); err != nil {
		t.Fatalf("%q: %s %q does not compact: %v", in, name, got, err)
	}
	json.Compact(&b, want)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("%q: %s %s, encoding/json %s", in, name, got, want)
	}
}

// ScanHead reads the members before the first one cut off, and the names
// of result and error even when their values are cut off; a value is
// read only when what follows it shows it is whole.
func TestScanHead(t *testing.T) {
	for _, c := range []struct {
		in, id          string
		method          string
		hasMethod       bool
		result, errored bool
	}{
		{`{"jsonrpc":"2.0","id":16,"result":{"content":[{"text":"aaa`, `16`, "", false, true, false},
		{`{"id":"a\"b","error":{"code":-1,"message":"lo`, `"a\"b"`, "", false, false, true},
		{`{"result":{"x":1},"id":3`, absent, "", false, true, false}, // the id may go on: 3 or 31
		{`{"jsonrpc":"2.0","id":16`, absent, "", false, false, false},
		{`{"jsonrpc":"2.0","id":16,`, `16`, "", false, false, false},
		{`{"id":4,"method":"sampling/createMessage","params":{"m":[`, `4`, "sampling/createMessage", true, false, false},
		{`{"id":4,"method":5,"result":`, `4`, "", true, true, false},
		{`{"id":4}`, `4`, "", false, false, false},
		{`[{"id":4,"result":1}]`, absent, "", false, false, false},
		{``, absent, "", false, false, false},
		{`{"id":4,"res`, `4`, "", false, false, false},
	} {
		e := ScanHead([]byte(c.in))
		if got := rawOr(e.ID); got != c.id || e.Method != c.method || e.HasMethod() != c.hasMethod || e.HasResult != c.result || e.HasError != c.errored {
			t.Errorf("%s: id %s method %q (%v) result %v error %v", c.in, got, e.Method, e.HasMethod(), e.HasResult, e.HasError)
		}
	}
}
