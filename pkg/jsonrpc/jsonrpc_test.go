package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseBadFrames(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	cases := []struct {
		name   string
		in     string
		code   int
		wantID string // the id the error echoes
	}{
		{"malformed JSON", `{"jsonrpc":"2.0",`, CodeParseError, "null"},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1,\"x\":\"\xff\"}", CodeParseError, "null"},
		{"batch", `[{"jsonrpc":"2.0","method":"ping","id":1}]`, CodeInvalidRequest, "null"},
		{"empty batch", `[]`, CodeInvalidRequest, "null"},
		{"number", `42`, CodeInvalidRequest, "null"},
		{"string", `"ping"`, CodeInvalidRequest, "null"},
		{"bare word", `ping`, CodeParseError, "null"},
		{"missing jsonrpc", `{"method":"ping","id":1}`, CodeInvalidRequest, "1"},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","method":"ping","id":"a"}`, CodeInvalidRequest, `"a"`},
		{"id null", `{"jsonrpc":"2.0","method":"ping","id":null}`, CodeInvalidRequest, "null"},
		{"id object", `{"jsonrpc":"2.0","method":"ping","id":{}}`, CodeInvalidRequest, "null"},
		{"id bool", `{"jsonrpc":"2.0","method":"ping","id":true}`, CodeInvalidRequest, "null"},
		{"id array", `{"jsonrpc":"2.0","method":"ping","id":[1]}`, CodeInvalidRequest, "null"},
		{"id fraction", `{"jsonrpc":"2.0","method":"ping","id":1.5}`, CodeInvalidRequest, "null"},
		{"id exponent", `{"jsonrpc":"2.0","method":"ping","id":1e3}`, CodeInvalidRequest, "null"},
		{"method number", `{"jsonrpc":"2.0","method":7,"id":1}`, CodeInvalidRequest, "1"},
		{"params scalar", `{"jsonrpc":"2.0","method":"ping","id":1,"params":3}`, CodeInvalidRequest, "1"},
		{"no method no result", `{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest, "1"},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":1,"error":{}}`, CodeInvalidRequest, "1"},
		{"deep nesting", `{"jsonrpc":"2.0","method":"ping","id":1,"params":` + deep + `}`, CodeParseError, "null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, perr := Parse([]byte(c.in))
			if perr == nil {
				t.Fatalf("accepted as %+v", m)
			}
			if perr.Err.Code != c.code {
				t.Fatalf("code %d (%s), want %d", perr.Err.Code, perr.Err.Message, c.code)
			}
			if got := string(perr.ID.Raw()); got != c.wantID {
				t.Fatalf("id %s, want %s", got, c.wantID)
			}
			frame := ErrorFrame(perr.ID, perr.Err)
			if !json.Valid(frame) || len(frame) > 1024 {
				t.Fatalf("bad error frame %s", frame)
			}
		})
	}
}

func TestParseGoodFrames(t *testing.T) {
	cases := []struct {
		in     string
		kind   Kind
		method string
		key    string
		rawID  string
	}{
		{`{"jsonrpc":"2.0","method":"ping","id":1}`, Request, "ping", "1", "1"},
		{`{"jsonrpc":"2.0","method":"ping","id":"1"}`, Request, "ping", `"1"`, `"1"`}, // not 1's key: ids keep their JSON type
		{`{"jsonrpc":"2.0","method":"ping","id":-7}`, Request, "ping", "-7", "-7"},
		{`{"jsonrpc":"2.0","method":"ping","id":"\u00e9"}`, Request, "ping", `"é"`, `"\u00e9"`},
		{`{"jsonrpc":"2.0","method":"ping","id":123456789012345678901234567890}`, Request, "ping", "123456789012345678901234567890", "123456789012345678901234567890"},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, Notification, "notifications/initialized", "", "null"},
		{`{"jsonrpc":"2.0","id":3,"result":{}}`, Response, "", "3", "3"},
		{` {"jsonrpc":"2.0","method":"x","params":[1],"id":0}` + "\r", Request, "x", "0", "0"},
	}
	for _, c := range cases {
		m, perr := Parse([]byte(c.in))
		if perr != nil {
			t.Fatalf("%s: %s", c.in, perr.Err.Message)
		}
		if m.Kind != c.kind || m.Method != c.method || m.ID.Key() != c.key || string(m.ID.Raw()) != c.rawID {
			t.Fatalf("%s: got %+v key %q", c.in, m, m.ID.Key())
		}
	}
}

// FuzzParse: no input panics, every rejection yields a valid small error
// frame, and every accepted request has a well-formed id.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","method":"ping","id":1}`, `[1]`, `{"id":{}}`, "\xff", `{"jsonrpc":"2.0","id":1,"result":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, perr := Parse(data)
		if perr != nil {
			if fr := ErrorFrame(perr.ID, perr.Err); !json.Valid(fr) {
				t.Fatalf("invalid error frame %q", fr)
			}
			return
		}
		if m.Kind == Request && !json.Valid(m.ID.Raw()) {
			t.Fatalf("bad id %q", m.ID.Raw())
		}
		if fr := ResultFrame(m.ID, []byte("{}")); !json.Valid(fr) {
			t.Fatalf("invalid result frame %q", fr)
		}
	})
}

// FuzzParseResponseAgreesWithParse: ParseResponse takes a line exactly when
// Parse takes it as a response, and reads the same id, result and error.
func FuzzParseResponseAgreesWithParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":"\u0031","error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2\u002e0","id":1,"result":1}`,
		`{"id":1,"result":1}`,
		`{"jsonrpc":"2.0","id":1.5,"result":1}`,
		`{"jsonrpc":"2.0","id":-0,"result":1,"error":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","result":1}`,
		`{"jsonrpc":"2.0","\u0069d":1,"id":"x","result":[1,"\xff"]}`,
		`{"jsonrpc":"2.0","id":1,"result":1} x`,
		` {"jsonrpc":"2.0","id":null,"result":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fast, ok := ParseResponse(in)
		m, perr := Parse(in)
		full := perr == nil && m.Kind == Response
		if ok != full {
			t.Fatalf("%q: ParseResponse %v, Parse as a response %v (%+v)", in, ok, full, perr)
		}
		if ok && (string(fast.ID.Raw()) != string(m.ID.Raw()) || string(fast.Result) != string(m.Result) ||
			string(fast.Error) != string(m.Error) || (fast.Result == nil) != (m.Result == nil) || (fast.Error == nil) != (m.Error == nil)) {
			t.Fatalf("%q: ParseResponse %+v, Parse %+v", in, fast, m)
		}
	})
}
