package envelope_test

// These tests hold the envelope to the daemon's parser, jsonrpc.Parse. They
// live in the external test package: jsonrpc imports envelope (for Key).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// TestAgreesWithParse: on frames the daemon's parser accepts, the envelope
// says what it says.
func TestAgreesWithParse(t *testing.T) {
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x\u0079","method":"tools/call","params":{"name":"a","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":-4,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","\u0069d":5,"m\u0065thod":"a\u00e9","params":[1]}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","x":1,"x":2}`,
	}
	for _, f := range frames {
		agreeWithParse(t, []byte(f), true)
	}
	// A member of the envelope written twice: both refuse it (the reply
	// carries no id when the id is the one repeated, which the shim counts
	// as a reply owed to a frame without one).
	for _, f := range []string{
		`{"id":1,"jsonrpc":"2.0","id":"2","method":"m","method":"n"}`,
		`{"jsonrpc":"2.0","id":5,"id":99,"result":{}}`,
		`{"jsonrpc":"2.0","\u0069d":5,"id":5,"method":"m"}`,
		`{"jsonrpc":"2.0","id":5,"method":"m","params":{},"params":{}}`,
	} {
		e, ok := envelope.Scan([]byte(f))
		_, perr := jsonrpc.Parse([]byte(f))
		if !ok || e.Kind() != envelope.Invalid || e.Repeated == "" || perr == nil || !strings.Contains(perr.Err.Message, "written twice") {
			t.Fatalf("%s: envelope %v %v, Parse %+v", f, ok, e.Kind(), perr)
		}
		if e.Repeated == "id" && !perr.ID.IsNull() {
			t.Fatalf("%s: answered under the id %s", f, perr.ID.Raw())
		}
	}
}

// agreeWithParse checks an input jsonrpc.Parse accepts; mustParse says it must.
func agreeWithParse(t *testing.T, in []byte, mustParse bool) {
	t.Helper()
	m, perr := jsonrpc.Parse(in)
	if perr != nil {
		if mustParse {
			t.Fatalf("jsonrpc.Parse refused %s: %s", in, perr.Err.Message)
		}
		return
	}
	e, ok := envelope.Scan(in)
	if !ok {
		t.Fatalf("%q: jsonrpc.Parse accepts it, Scan does not", in)
	}
	want := map[jsonrpc.Kind]envelope.Kind{jsonrpc.Request: envelope.Request, jsonrpc.Notification: envelope.Notification, jsonrpc.Response: envelope.Response}[m.Kind]
	if e.Kind() != want || e.Method != m.Method || (e.ID == nil) != m.ID.IsNull() ||
		(e.ID != nil && !bytes.Equal(e.ID, m.ID.Raw())) || !bytes.Equal(e.Params, m.Params) ||
		envelope.Key(e.ID) != m.ID.Key() {
		t.Fatalf("%q: envelope %+v (kind %v), jsonrpc.Parse %+v", in, e, e.Kind(), m)
	}
}

// FuzzScanAgreesWithParse: on frames jsonrpc.Parse accepts, the envelope
// says what it says (FuzzScanAgreesWithEncodingJSON holds it to encoding/json
// on every input).
func FuzzScanAgreesWithParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","result":{"x":[1,2.5e3,null,true,false,"\"\\"]}}`,
		`{"jsonrpc":"2.0","\u0069d":1,"method":"\ud83d\ude00","params":[]}`,
		`{"jsonrpc":"2.0","id":1,"id":"\u0031","method":"a","method":3}`,
		`{"jsonrpc":"2.0","id":5,"id":99,"result":{}}`,
		`{"jsonrpc":"2.0","id":-0,"error":{"code":1,"message":"m"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) { agreeWithParse(t, in, false) })
}

// replyFrame is a show_file-like reply of about size bytes: source text
// (tabs, quotes, backslashes, some non-ASCII) JSON-escaped into a result.
func replyFrame(size int) []byte {
	var text strings.Builder
	for i := 0; text.Len() < size*9/10; i++ {
		fmt.Fprintf(&text, "%d\tfunc f%d(s string) string { return strings.ReplaceAll(s, \"\\\\\", \"/\") } // café №%d\n", i+1, i, i)
	}
	result := map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": text.String()}},
		"structuredContent": map[string]any{"path": "pkg/big.go", "start_line": 1, "total_lines": 9000, "truncated": false},
		"isError":           false,
	}
	b, err := json.Marshal(result)
	if err != nil {
		panic(err)
	}
	return jsonrpc.ResultFrame(jsonrpc.RawID([]byte(`12345`)), b)
}

func TestReplyFrame(t *testing.T) {
	frame := replyFrame(1 << 20)
	e, ok := envelope.Scan(frame)
	if !ok || e.Kind() != envelope.Response || string(e.ID) != "12345" {
		t.Fatalf("reply: ok %v %+v", ok, e)
	}
}

// BenchmarkReply compares reading the envelope of a 1 MiB reply with envelope.Scan
// and with the daemon's full parse (and encoding/json's validity check).
func BenchmarkReply(b *testing.B) {
	frame := replyFrame(1 << 20)
	b.Run("envelope.Scan", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for b.Loop() {
			if e, ok := envelope.Scan(frame); !ok || e.Kind() != envelope.Response {
				b.Fatal("not a response")
			}
		}
	})
	b.Run("jsonrpc.Parse", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for b.Loop() {
			if m, perr := jsonrpc.Parse(frame); perr != nil || m.Kind != jsonrpc.Response {
				b.Fatal("not a response")
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for b.Loop() {
			if !json.Valid(frame) {
				b.Fatal("invalid")
			}
		}
	})
}

// BenchmarkRequest is a typical small client frame.
func BenchmarkRequest(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"search","arguments":{"query":"func main","limit":20},"_meta":{"progressToken":17}}}`)
	b.Run("envelope.Scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			envelope.Scan(frame)
		}
	})
	b.Run("jsonrpc.Parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			jsonrpc.Parse(frame)
		}
	})
}
