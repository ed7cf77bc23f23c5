package wire

import (
	"encoding/json"
	"testing"
)

func TestFrames(t *testing.T) {
	if !json.Valid([]byte(TooLargeFrame)) {
		t.Fatal("TooLargeFrame is not JSON")
	}
	got := string(ResultFrame(RawID([]byte(`"a"`)), []byte(`{}`)))
	if got != `{"jsonrpc":"2.0","id":"a","result":{}}` {
		t.Fatal(got)
	}
	n, err := NotificationFrame("notifications/progress", map[string]any{"progress": 1})
	if err != nil || string(n) != `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}` {
		t.Fatal(string(n), err)
	}
}

// The frame builders write these bytes exactly: ids, params, results and
// error objects verbatim, no params member when params is nil, and every
// frame valid JSON whatever the method's characters.
func TestFrameBuilders(t *testing.T) {
	id := RawID([]byte(`"\u0031"`))
	for _, c := range []struct{ got, want string }{
		{string(RequestFrame(id, "tools/call", []byte(`{"name":"a"}`))), `{"jsonrpc":"2.0","id":"\u0031","method":"tools/call","params":{"name":"a"}}`},
		{string(RequestFrame(RawID([]byte(`7`)), "ping", nil)), `{"jsonrpc":"2.0","id":7,"method":"ping"}`},
		{string(RequestFrame(ID{}, "a<b>&é", nil)), `{"jsonrpc":"2.0","id":null,"method":"a<b>&é"}`},
		{string(RequestFrame(id, "x\x01\"\\y", nil)), `{"jsonrpc":"2.0","id":"\u0031","method":"x\u0001\"\\y"}`},
		{string(RawNotificationFrame("notifications/initialized", nil)), `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{string(RawNotificationFrame("m", []byte(`[1]`))), `{"jsonrpc":"2.0","method":"m","params":[1]}`},
		{string(must(NotificationFrame("m", map[string]any{}))), `{"jsonrpc":"2.0","method":"m","params":{}}`},
		{string(ResponseFrame(id, []byte(`{}`), nil)), `{"jsonrpc":"2.0","id":"\u0031","result":{}}`},
		{string(ResponseFrame(id, nil, []byte(`{"code":1,"message":"m"}`))), `{"jsonrpc":"2.0","id":"\u0031","error":{"code":1,"message":"m"}}`},
		{string(ResultFrame(RawID([]byte(`-3`)), []byte(`null`))), `{"jsonrpc":"2.0","id":-3,"result":null}`},
		{string(ErrorFrame(id, &Error{Code: -32600, Message: "no"})), `{"jsonrpc":"2.0","id":"\u0031","error":{"code":-32600,"message":"no"}}`},
		{string(ErrorFrame(id, &Error{Code: 1, Message: "m", Data: func() {}})), `{"jsonrpc":"2.0","id":"\u0031","error":{"code":1,"message":"m"}}`},
	} {
		if c.got != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
		if !json.Valid([]byte(c.got)) {
			t.Errorf("invalid JSON: %s", c.got)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
