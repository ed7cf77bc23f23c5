package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// TestBadInputTable sends every kind of bad frame on one connection; each gets
// a clear error in its place and the connection keeps serving (a ping after
// each row is answered).
func TestBadInputTable(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)

	// Before initialize: refused, but ping works.
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if r := c.recv(); errCode(r) != jsonrpc.CodeInvalidRequest || r["id"] != 1.0 {
		t.Fatalf("request before initialize: %v", r)
	}
	c.initialize()

	pad := func(n int) string {
		head := `{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"`
		tail := `"}}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	deep := `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}}`
	rows := []struct {
		name  string
		frame string
		check func(m map[string]any) bool
	}{
		{"malformed JSON", `{"jsonrpc":"2.0","id":2,`, func(m map[string]any) bool { return errCode(m) == -32700 && m["id"] == nil }},
		{"1 MiB + 1 line", pad(frame.MaxLine + 1), func(m map[string]any) bool {
			b, _ := json.Marshal(m)
			return string(b) == `{"error":{"code":-32600,"data":{"errors":[{"msg":"payload_too_large","path":""}],"ok":false,"reason":"validation_failed"},"message":"payload_too_large"},"id":null,"jsonrpc":"2.0"}`
		}},
		{"exactly 1 MiB line is accepted", pad(frame.MaxLine), func(m map[string]any) bool { return m["id"] == "big" && m["result"] != nil }},
		{"batch array", `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, func(m map[string]any) bool { return errCode(m) == -32600 && m["id"] == nil }},
		{"non-object", `"ping"`, func(m map[string]any) bool { return errCode(m) == -32600 }},
		{"missing jsonrpc", `{"id":4,"method":"ping"}`, func(m map[string]any) bool { return errCode(m) == -32600 && m["id"] == 4.0 }},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, func(m map[string]any) bool { return errCode(m) == -32600 && m["id"] == nil }},
		{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, func(m map[string]any) bool { return errCode(m) == -32600 }},
		{"id bool", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, func(m map[string]any) bool { return errCode(m) == -32600 }},
		{"unknown method", `{"jsonrpc":"2.0","id":6,"method":"no/such"}`, func(m map[string]any) bool { return errCode(m) == -32601 && m["id"] == 6.0 }},
		{"unknown tool", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}`, func(m map[string]any) bool { return errCode(m) == -32602 }},
		{"unknown argument", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","bogus":1}}}`, func(m map[string]any) bool {
			p, isErr := toolPayload(t, m)
			return isErr && p["code"] == "INVALID_REQUEST" && strings.Contains(p["message"].(string), "bogus")
		}},
		{"ill-typed argument", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":5}}}`, func(m map[string]any) bool {
			p, isErr := toolPayload(t, m)
			return isErr && p["code"] == "INVALID_REQUEST" && strings.Contains(p["message"].(string), "/text")
		}},
		{"arguments not an object", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":[1]}}`, func(m map[string]any) bool {
			p, isErr := toolPayload(t, m)
			return isErr && p["code"] == "INVALID_REQUEST"
		}},
		{"tools/call params an array", `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":["echo"]}`, func(m map[string]any) bool { return errCode(m) == -32602 && m["id"] == 16.0 }},
		{"tool name not a string", `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":5}}`, func(m map[string]any) bool { return errCode(m) == -32602 }},
		{"tool name missing", `{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"arguments":{}}}`, func(m map[string]any) bool { return errCode(m) == -32602 }},
		{"_meta not an object", `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"},"_meta":"x"}}`, func(m map[string]any) bool { return errCode(m) == -32602 }},
		{"arguments null count as {}", `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"echo","arguments":null}}`, func(m map[string]any) bool {
			p, isErr := toolPayload(t, m)
			return !isErr && p["text"] == ""
		}},
		{"arguments escaped and spaced", `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"echo", "arguments" : { "t\u0065xt" : "a\nb" } }}`, func(m map[string]any) bool {
			_, isErr := toolPayload(t, m)
			return !isErr && m["id"] == 21.0
		}},
		{"argument number math/big cannot parse", `{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"echo","arguments":{"gain":1E1000001}}}`, func(m map[string]any) bool {
			p, isErr := toolPayload(t, m)
			return isErr && p["code"] == "INVALID_REQUEST" && strings.Contains(p["message"].(string), "/gain") && strings.Contains(p["message"].(string), "out of range")
		}},
		{"argument number with a million digits", `{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"echo","arguments":{"gain":` + strings.Repeat("7", 1_000_000) + `}}}`, func(m map[string]any) bool {
			p, isErr := toolPayload(t, m)
			return isErr && p["code"] == "INVALID_REQUEST" && strings.Contains(p["message"].(string), "/gain") && strings.Contains(p["message"].(string), "digits")
		}},
		{"form feed is not JSON whitespace", "\f" + `{"jsonrpc":"2.0","id":22,"method":"ping"}`, func(m map[string]any) bool { return errCode(m) == -32700 }},
		{"100 000-deep nesting", deep, func(m map[string]any) bool { return errCode(m) == -32700 }},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"ping\",\"params\":{\"s\":\"\xc3\x28\"}}", func(m map[string]any) bool { return errCode(m) == -32700 }},
		{"params not structured", `{"jsonrpc":"2.0","id":12,"method":"ping","params":"x"}`, func(m map[string]any) bool { return errCode(m) == -32600 }},
		{"second initialize", `{"jsonrpc":"2.0","id":13,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, func(m map[string]any) bool { return errCode(m) == -32600 }},
		{"bad log level", `{"jsonrpc":"2.0","id":14,"method":"logging/setLevel","params":{"level":"loud"}}`, func(m map[string]any) bool { return errCode(m) == -32602 }},
		{"bad cursor", `{"jsonrpc":"2.0","id":15,"method":"tools/list","params":{"cursor":"zzz"}}`, func(m map[string]any) bool { return errCode(m) == -32602 }},
	}
	// An integer argument takes an integral number however it is written
	// (the schema has called it an integer); one past 64 bits is out of
	// range at its path, in the contract's words.
	for i, form := range []struct{ lit, want string }{
		{"50", "50"}, {"50.0", "50"}, {"5e1", "50"}, {"5.0e1", "50"}, {"500e-1", "50"}, {"-0", "0"}, {"1e400", ""},
	} {
		rows = append(rows, struct {
			name  string
			frame string
			check func(m map[string]any) bool
		}{"integer argument " + form.lit, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"n":%s}}}`, 30+i, form.lit), func(m map[string]any) bool {
			p, isErr := toolPayload(t, m)
			if form.want == "" {
				msg, _ := p["message"].(string)
				return isErr && p["code"] == "INVALID_REQUEST" && strings.HasSuffix(msg, "/n: number out of range") && !strings.Contains(msg, "int64")
			}
			return !isErr && fmt.Sprint(p["n"]) == form.want
		}})
	}
	for i, row := range rows {
		c.send(row.frame)
		m := c.recv()
		if !row.check(m) {
			t.Errorf("%s: unexpected reply %v", row.name, m)
		}
		c.sendf(`{"jsonrpc":"2.0","id":"after-%d","method":"ping"}`, i)
		if r := c.recv(); r["id"] != fmt.Sprintf("after-%d", i) || r["result"] == nil {
			t.Fatalf("%s: connection stopped serving: %v", row.name, r)
		}
	}
	if srv.Counters().Errors == 0 {
		t.Fatal("errors were not counted")
	}
}

func TestErrorRepliesAreSmall(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.initialize()
	big := strings.Repeat("é", 200000) // over maxLength, ~400 KB
	c.sendf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, big)
	m := c.recv()
	b, _ := json.Marshal(m)
	if len(b) > 1024 {
		t.Fatalf("error reply is %d bytes", len(b))
	}
	p, isErr := toolPayload(t, m)
	if !isErr || p["code"] != "INVALID_REQUEST" {
		t.Fatalf("got %v", p)
	}
}

func TestInitializeNegotiatesVersion(t *testing.T) {
	for _, tc := range []struct{ asked, want string }{
		{"2025-11-25", "2025-11-25"}, {"2025-06-18", "2025-06-18"}, {"2025-03-26", "2025-03-26"},
		{"2024-11-05", "2024-11-05"}, {"1999-01-01", "2025-11-25"}, {"", "2025-11-25"},
	} {
		srv, _ := newTestServer(t, Options{Version: "9.9", Instructions: "be kind"})
		c := startSession(t, srv)
		c.sendf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`, tc.asked)
		r := c.recv()["result"].(map[string]any)
		if r["protocolVersion"] != tc.want {
			t.Errorf("asked %q got %v", tc.asked, r["protocolVersion"])
		}
		if r["serverInfo"].(map[string]any)["version"] != "9.9" || r["instructions"] != "be kind" {
			t.Errorf("serverInfo/instructions: %v", r)
		}
		caps := r["capabilities"].(map[string]any)
		if caps["tools"] == nil || caps["logging"] == nil {
			t.Errorf("capabilities: %v", caps)
		}
	}
}

func TestToolsListPagination(t *testing.T) {
	srv, _ := newTestServer(t, Options{PageSize: 3})
	c := startSession(t, srv)
	c.initialize()
	var names []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
		if cursor == "" {
			c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		} else {
			c.sendf(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":%q}}`, cursor)
		}
		r := c.recv()["result"].(map[string]any)
		for _, tl := range r["tools"].([]any) {
			def := tl.(map[string]any)
			names = append(names, def["name"].(string))
			if def["schemaVersion"] != 1.0 || def["toolingVersion"] != "test+0" || def["annotations"] == nil || def["inputSchema"] == nil {
				t.Fatalf("definition lacks contract fields: %v", def)
			}
		}
		next, _ := r["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if len(names) != srv.Registry().Len() {
		t.Fatalf("listed %d of %d tools: %v", len(names), srv.Registry().Len(), names)
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatalf("not sorted or duplicated: %v", names)
		}
	}
}

// TestPlainConnectionKeepsRequestOrder: a connection that never sent
// initialize keeps the FIFO: a slow plain request holds back the fast ones
// behind it, error replies to malformed frames included, and replies leave
// in request order.
func TestPlainConnectionKeepsRequestOrder(t *testing.T) {
	srv, tt := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.send(`{"jsonrpc":"2.0","id":0,"method":"plain_wait","params":{"gate":"slow"}}`)
	waitFor(t, func() bool { return tt.count("plain_wait:slow") == 1 })
	want := []string{"0"}
	for i := 1; i <= 200; i++ {
		switch i % 4 {
		case 0:
			c.sendf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
			want = append(want, fmt.Sprint(i))
		case 1, 2:
			c.sendf(`{"jsonrpc":"2.0","id":"%d","method":"plain","params":{"x":%d}}`, i, i)
			want = append(want, fmt.Sprint(i))
		case 3:
			c.send(`{"jsonrpc":"2.0","id":`) // malformed: its -32700 in its place
			want = append(want, "<nil>")
		}
	}
	// Everything is read and waits behind request 0.
	waitFor(t, func() bool { return srv.Counters().Requests == 201 })
	tt.open("slow")
	for i, id := range want {
		r := c.recv()
		if got := fmt.Sprint(r["id"]); got != id {
			t.Fatalf("reply %d has id %v, want %s: %v", i, r["id"], id, r)
		}
		if id == "<nil>" && errCode(r) != jsonrpc.CodeParseError {
			t.Fatalf("reply %d: %v", i, r)
		}
	}
}

func TestCancelledNotificationSendsNothing(t *testing.T) {
	srv, tt := newTestServer(t, Options{MaxConcurrentCalls: 1})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":1}}}`) // waits for the slot
	waitFor(t, func() bool { return tt.count("block") == 1 })
	// The waiting one first: cancelling 1 first would let 2 start.
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"2"}}`) // "2" is not 2: ignored
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}`) // unknown: ignored
	c.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if r := c.recv(); r["id"] != 3.0 {
		t.Fatalf("expected only the ping's reply, got %v", r)
	}
	waitFor(t, func() bool { return tt.count("block_cancelled") == 1 })
	// The slot is free again and 2 is gone: the next call runs and is the
	// next frame.
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"next"}}}`)
	if r := c.recv(); r["id"] != 4.0 {
		t.Fatalf("expected the next call's reply, got %v", r)
	}
	if n := tt.count("sleep"); n != 0 {
		t.Fatalf("a cancelled waiting request started (%d)", n)
	}
}

func TestCancelRequestRepliesOnce(t *testing.T) {
	srv, tt := newTestServer(t, Options{MaxConcurrentCalls: 1})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"block","_meta":{"progressToken":"p"}}}`)
	c.send(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"sleep","arguments":{"ms":1}}}`)
	c.send(`{"jsonrpc":"2.0","id":"c","method":"ping"}`)
	if r := c.recv(); r["id"] != "c" || r["result"] == nil {
		t.Fatalf("ping c is answered at once: %v", r)
	}
	waitFor(t, func() bool { return tt.count("block") == 1 })
	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"b"}}`) // waiting: never starts, one CANCELLED now
	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"a"}}`)
	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"a"}}`) // twice: still one reply
	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"c"}}`) // finished: ignored
	for _, id := range []string{"b", "a"} {
		r := c.recv()
		if r["id"] != id {
			t.Fatalf("want reply for %s, got %v", id, r)
		}
		p, isErr := toolPayload(t, r)
		if !isErr || p["code"] != "CANCELLED" {
			t.Fatalf("%s: %v", id, p)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":"d","method":"ping"}`)
	if r := c.recv(); r["id"] != "d" {
		t.Fatalf("extra frame after cancellation: %v", r)
	}
	if tt.count("sleep") != 0 {
		t.Fatal("cancelled waiting request started")
	}
}

func TestProgressCoalescedAndNeverAfterResponse(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.initialize()
	start := time.Now()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","arguments":{"steps":300,"every_ms":3},"_meta":{"progressToken":42}}}`)
	var progress []float64
	for {
		m := c.recv()
		if m["method"] == "notifications/progress" {
			p := m["params"].(map[string]any)
			if p["progressToken"] != 42.0 || p["total"] != 300.0 {
				t.Fatalf("bad progress params %v", p)
			}
			progress = append(progress, p["progress"].(float64))
			continue
		}
		if m["id"] != 1.0 {
			t.Fatalf("unexpected %v", m)
		}
		break
	}
	elapsed := time.Since(start)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if r := c.recv(); r["id"] != 2.0 {
		t.Fatalf("a frame came after the response: %v", r)
	}
	if len(progress) < 2 {
		t.Fatalf("only %d progress notifications", len(progress))
	}
	for i := 1; i < len(progress); i++ {
		if progress[i] <= progress[i-1] {
			t.Fatalf("progress not strictly increasing: %v", progress)
		}
	}
	// At most one per 250 ms window, plus the first. The windows are the
	// sender's; the test sees them through two goroutines' scheduling, so
	// a quarter of a window is allowed for the first frame's delay (a
	// loaded machine received 5 spaced 250 ms apart within 982 ms).
	if limit := int((elapsed+progressInterval/4)/progressInterval) + 1; len(progress) > limit {
		t.Fatalf("%d notifications in %v (limit %d)", len(progress), elapsed, limit)
	}
}

func TestNoProgressWithoutToken(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","arguments":{"steps":3,"every_ms":1}}}`)
	if m := c.recv(); m["id"] != 1.0 {
		t.Fatalf("got %v", m)
	}
}

func TestTimeout(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow_timeout"}}`)
	p, isErr := toolPayload(t, c.recv())
	if !isErr || p["code"] != "TOOL_TIMEOUT" || p["timeoutMs"] != 50.0 {
		t.Fatalf("default timeout: %v", p)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_timeout","arguments":{"timeout_ms":20}}}`)
	p, isErr = toolPayload(t, c.recv())
	if !isErr || p["code"] != "TOOL_TIMEOUT" || p["timeoutMs"] != 20.0 {
		t.Fatalf("overridden timeout: %v", p)
	}
}

func TestPanicIsInternalErrorAndServingGoesOn(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"panic"}}`)
	r := c.recv()
	if errCode(r) != -32603 || r["error"].(map[string]any)["message"] != "Internal error: string: boom" {
		t.Fatalf("panic reply: %v", r)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}`)
	if p, _ := toolPayload(t, c.recv()); p["text"] != "still here" {
		t.Fatalf("after panic: %v", p)
	}
	if srv.Counters().Panics != 1 {
		t.Fatalf("panics %d", srv.Counters().Panics)
	}
}

func TestErrorTable(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"store_down"}}`)
	r := c.recv()
	if errCode(r) != -32000 || r["error"].(map[string]any)["message"] != "Database connection failed. Please check SQLite is running." {
		t.Fatalf("store error: %v", r)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"not_found"}}`)
	if p, isErr := toolPayload(t, c.recv()); !isErr || p["code"] != "NOT_FOUND" || p["hint"] != "make one" {
		t.Fatalf("not found: %v", p)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"secret_fail"}}`)
	m := c.recv()
	b, _ := json.Marshal(m)
	if strings.Contains(string(b), "hunter2") {
		t.Fatalf("secret leaked: %s", b)
	}
	if p, isErr := toolPayload(t, m); !isErr || p["code"] != "INTERNAL" {
		t.Fatalf("internal: %v", p)
	}
}

// TestQueueOverloaded: calls waiting for a slot count against QueueDepth with
// the running ones; past it a call is refused at once. Protocol requests
// are answered at once and never count.
func TestQueueOverloaded(t *testing.T) {
	srv, tt := newTestServer(t, Options{QueueDepth: 2, MaxConcurrentCalls: 1})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`)
	waitFor(t, func() bool { return tt.count("block") == 1 })
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`) // waits
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}`) // over the bound
	c.send(`{"jsonrpc":"2.0","id":4,"method":"plain","params":{"x":1}}`)                             // a plain method is a call too
	c.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	r := c.recv()
	if p, isErr := toolPayload(t, r); r["id"] != 3.0 || !isErr || p["code"] != "QUEUE_OVERLOADED" {
		t.Fatalf("3: %v", r)
	}
	if r := c.recv(); r["id"] != 4.0 || errCode(r) != jsonrpc.CodeOverloaded {
		t.Fatalf("4: %v", r)
	}
	if r := c.recv(); r["id"] != 5.0 || r["result"] == nil {
		t.Fatalf("5: %v", r)
	}
	close(tt.release)
	if r := c.recv(); r["id"] != 1.0 || r["result"] == nil {
		t.Fatalf("1: %v", r)
	}
	if r := c.recv(); r["id"] != 2.0 || r["result"] == nil {
		t.Fatalf("2: %v", r)
	}
	c.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	if r := c.recv(); r["id"] != 6.0 || r["result"] == nil {
		t.Fatalf("after overload: %v", r)
	}
}

// TestQueueOverloadedInOrderOnPlainConnection: on a FIFO connection the
// refusal takes its place in the reply order.
func TestQueueOverloadedInOrderOnPlainConnection(t *testing.T) {
	srv, tt := newTestServer(t, Options{QueueDepth: 2})
	c := startSession(t, srv)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"plain_wait","params":{"gate":"g"}}`)
	waitFor(t, func() bool { return tt.count("plain_wait:g") == 1 })
	errs := srv.Counters().Errors
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"plain","params":{"x":3}}`)
	c.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	waitFor(t, func() bool { return srv.Counters().Errors == errs+2 })
	tt.open("g")
	if r := c.recv(); r["id"] != 1.0 || r["result"] == nil {
		t.Fatalf("1: %v", r)
	}
	if r := c.recv(); r["id"] != 2.0 || r["result"] == nil {
		t.Fatalf("2: %v", r)
	}
	if r := c.recv(); r["id"] != 3.0 || errCode(r) != jsonrpc.CodeOverloaded {
		t.Fatalf("3: %v", r)
	}
	if r := c.recv(); r["id"] != 4.0 || errCode(r) != jsonrpc.CodeOverloaded {
		t.Fatalf("4: %v", r)
	}
}

// TestQueueBytesBound: the memory pending requests hold is bounded too, not
// only their number; a request on an idle connection is always served.
func TestQueueBytesBound(t *testing.T) {
	srv, tt := newTestServer(t, Options{QueueBytes: 1 << 20})
	c := startSession(t, srv)
	c.initialize()
	big := func(id int) string { // ~400 KB of text, over 1 MiB decoded with what it holds
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"},"pad":[%s0]}}`,
			id, strings.Repeat("0,", 200_000))
	}
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`)
	waitFor(t, func() bool { return tt.count("block") == 1 })
	c.send(big(2))
	c.send(big(3))
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"small"}}}`)
	for _, id := range []float64{2, 3} {
		r := c.recv()
		if p, isErr := toolPayload(t, r); r["id"] != id || !isErr || p["code"] != "QUEUE_OVERLOADED" {
			t.Fatalf("%v: %v", id, r)
		}
	}
	if r := c.recv(); r["id"] != 4.0 {
		t.Fatalf("a small request within the budget: %v", r)
	} else if _, isErr := toolPayload(t, r); isErr {
		t.Fatalf("4: %v", r)
	}
	close(tt.release)
	if r := c.recv(); r["id"] != 1.0 {
		t.Fatalf("1: %v", r)
	}
	c.send(big(5)) // nothing pending: served whatever its size
	if r := c.recv(); r["id"] != 5.0 {
		t.Fatalf("5: %v", r)
	} else if _, isErr := toolPayload(t, r); isErr {
		t.Fatalf("a large request on an idle connection: %v", r)
	}
}

func TestPlainMethodWithoutInitialize(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"plain","params":{"x":7}}`)
	r := c.recv()
	res := r["result"].(map[string]any)
	if res["ok"] != true || res["x"] != 7.0 {
		t.Fatalf("plain: %v", r)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"plain","params":{"y":7}}`)
	if r := c.recv(); errCode(r) != -32602 {
		t.Fatalf("plain with bad params: %v", r)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"echo","params":{}}`) // not a plain method
	if r := c.recv(); errCode(r) != -32600 {
		t.Fatalf("non-plain tool as method: %v", r)
	}
}

func TestLoggingLevel(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"logger"}}`)
	m := c.recv()
	if m["method"] != "notifications/message" || m["params"].(map[string]any)["data"] != "error line" {
		t.Fatalf("default level should pass errors only: %v", m)
	}
	c.recv() // the response
	c.send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"logger"}}`)
	if m := c.recv(); m["params"].(map[string]any)["data"] != "debug line" {
		t.Fatalf("debug not sent after setLevel: %v", m)
	}
}

// TestEOFAnswersEverythingRead: end of input is not a disconnect; a client
// that closed its write half gets every reply it is owed.
func TestEOFAnswersEverythingRead(t *testing.T) {
	srv, tt := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{"gate":"g"}}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	c.in.Close()
	if r := c.recv(); r["id"] != 2.0 {
		t.Fatal(r)
	}
	waitFor(t, func() bool { return tt.count("wait:g") == 1 })
	tt.open("g")
	if r := c.recv(); r["id"] != 1.0 || r["result"] == nil {
		t.Fatal(r)
	}
	if err := c.served(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if tt.count("wait:g:cancelled") != 0 {
		t.Fatal("end of input cancelled a call")
	}
}

func TestDrainFinishesRunningCallAndRefusesQueued(t *testing.T) {
	srv, tt := newTestServer(t, Options{MaxConcurrentCalls: 1})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{"gate":"g"}}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`) // waits
	c.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if r := c.recv(); r["id"] != 3.0 {
		t.Fatalf("ping: %v", r)
	}
	waitFor(t, func() bool { return tt.count("wait:g") == 1 })
	c.cancel() // the daemon is stopping
	if r := c.recv(); r["id"] != 2.0 || errCode(r) != jsonrpc.CodeShuttingDown {
		t.Fatalf("the waiting call should be refused: %v", r)
	}
	tt.open("g")
	r := c.recv()
	if p, isErr := toolPayload(t, r); r["id"] != 1.0 || isErr || p["gate"] != "g" {
		t.Fatalf("running call should finish: %v", r)
	}
	c.served()
	if tt.count("echo") != 0 {
		t.Fatal("a call refused by the drain ran")
	}
}

// TestDrainOnPlainConnection: a FIFO connection drains as it always did:
// the running request gets the drain timeout, the queued one is refused in
// its place.
func TestDrainOnPlainConnection(t *testing.T) {
	srv, tt := newTestServer(t, Options{DrainTimeout: 50 * time.Millisecond})
	c := startSession(t, srv)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"plain_wait","params":{"gate":"g"}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"plain","params":{"x":2}}`)
	waitFor(t, func() bool { return tt.count("plain_wait:g") == 1 })
	c.cancel()
	for _, id := range []float64{1, 2} {
		if r := c.recv(); r["id"] != id || errCode(r) != jsonrpc.CodeShuttingDown {
			t.Fatalf("%v: %v", id, r)
		}
	}
	c.served()
}

func TestDrainTimeoutCancelsStuckCall(t *testing.T) {
	srv, tt := newTestServer(t, Options{DrainTimeout: 50 * time.Millisecond})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`)
	waitFor(t, func() bool { return tt.count("block") == 1 })
	c.cancel()
	if r := c.recv(); errCode(r) != jsonrpc.CodeShuttingDown {
		t.Fatalf("stuck call after drain timeout: %v", r)
	}
}

func TestDuplicatePendingID(t *testing.T) {
	srv, tt := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block"}}`)
	waitFor(t, func() bool { return tt.count("block") == 1 })
	c.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if r := c.recv(); r["id"] != 7.0 || errCode(r) != jsonrpc.CodeDuplicateID {
		t.Fatalf("duplicate id (protocol method): %v", r)
	}
	// "7" is another id than 7 (JSON-RPC compares ids by type and value).
	c.send(`{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	if r := c.recv(); r["id"] != "7" || r["result"] == nil {
		t.Fatalf(`"7" while 7 is in flight: %v`, r)
	}
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	if r := c.recv(); r["id"] != 7.0 || errCode(r) != jsonrpc.CodeDuplicateID {
		t.Fatalf("duplicate id (call): %v", r)
	}
	close(tt.release)
	if r := c.recv(); r["id"] != 7.0 || r["result"] == nil {
		t.Fatal(r)
	}
	// Once answered, the id is free again.
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	if r := c.recv(); r["id"] != 7.0 || r["result"] == nil {
		t.Fatal(r)
	}
}

func TestToolCounters(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.initialize()
	for i := 0; i < 3; i++ {
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
		c.recv()
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"not_found"}}`)
	c.recv()
	byName := map[string]ToolCounters{}
	for _, tc := range srv.ToolCounters() {
		byName[tc.Name] = tc
	}
	if e := byName["echo"]; e.Calls != 3 || e.Errors != 0 {
		t.Fatalf("echo: %+v", e)
	}
	if nf := byName["not_found"]; nf.Calls != 1 || nf.Errors != 1 {
		t.Fatalf("not_found: %+v", nf)
	}
	if byName["panic"].Calls != 0 {
		t.Fatal("uncalled tool has calls")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

var _ = context.Background

type fakeResources struct{}

func (fakeResources) Resources() []tool.Resource {
	return []tool.Resource{{URI: "t://a", Name: "a", MimeType: "text/plain"}, {URI: "t://b", Name: "b"}, {URI: "t://c", Name: "c"}}
}

func (fakeResources) ReadResource(uri string) (string, string, error) {
	if uri == "t://a" {
		return "alpha", "text/plain", nil
	}
	return "", "", tool.ErrNoResource
}

func TestResources(t *testing.T) {
	srv, _ := newTestServer(t, Options{PageSize: 2})
	srv.Registry().AddResources(fakeResources{})
	c := startSession(t, srv)
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	if caps := c.recv()["result"].(map[string]any)["capabilities"].(map[string]any); caps["resources"] == nil {
		t.Fatalf("no resources capability: %v", caps)
	}
	c.send(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`)
	r := c.recv()["result"].(map[string]any)
	if len(r["resources"].([]any)) != 2 || r["nextCursor"] == nil {
		t.Fatalf("page 1: %v", r)
	}
	c.sendf(`{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{"cursor":%q}}`, r["nextCursor"])
	if r := c.recv()["result"].(map[string]any); len(r["resources"].([]any)) != 1 || r["nextCursor"] != nil {
		t.Fatalf("page 2: %v", r)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"t://a"}}`)
	got := c.recv()["result"].(map[string]any)["contents"].([]any)[0].(map[string]any)
	if got["text"] != "alpha" || got["mimeType"] != "text/plain" || got["uri"] != "t://a" {
		t.Fatalf("read: %v", got)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"t://nope"}}`)
	if m := c.recv(); errCode(m) != jsonrpc.CodeResourceNotFound {
		t.Fatalf("unknown uri: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","id":5,"method":"resources/templates/list"}`)
	if m := c.recv(); m["result"] == nil {
		t.Fatalf("templates: %v", m)
	}
}

func TestNoResourcesNoCapability(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`)
	if m := c.recv(); errCode(m) != -32601 {
		t.Fatalf("without providers resources/list is unknown: %v", m)
	}
}

// TestRootsFromTheClient: a client declaring the roots capability is asked
// for roots/list after notifications/initialized and again when it says
// they changed; tools see the file roots as paths. Answers to an older
// request, errors and non-file URIs change nothing.
func TestRootsFromTheClient(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"test","version":"1"}}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	req := c.recv()
	if req["method"] != "roots/list" || req["id"] != "hearth-roots-1" {
		t.Fatalf("want a roots/list request, got %v", req)
	}
	// A call sent before the answer waits for it.
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
	time.Sleep(50 * time.Millisecond)
	c.send(`{"jsonrpc":"2.0","id":"hearth-roots-1","result":{"roots":[{"uri":"file:///home/u/my%20project","name":"p"},{"uri":"https://example.com/x"},{"uri":"file://otherhost/x"}]}}`)
	p, _ := toolPayload(t, c.recvResponse())
	if roots, _ := p["roots"].([]any); len(roots) != 1 || roots[0] != "/home/u/my project" {
		t.Fatalf("roots: %v", p)
	}

	c.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	if req := c.recv(); req["method"] != "roots/list" || req["id"] != "hearth-roots-2" {
		t.Fatalf("want a second roots/list, got %v", req)
	}
	c.send(`{"jsonrpc":"2.0","id":"hearth-roots-1","result":{"roots":[{"uri":"file:///stale"}]}}`)
	c.send(`{"jsonrpc":"2.0","id":"hearth-roots-2","error":{"code":-32601,"message":"no"}}`)
	c.send(`{"jsonrpc":"2.0","id":"someone-else","result":{}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
	p, _ = toolPayload(t, c.recvResponse())
	if roots, _ := p["roots"].([]any); len(roots) != 1 || roots[0] != "/home/u/my project" {
		t.Fatalf("roots after stale/error answers: %v", p)
	}
	c.send(`{"jsonrpc":"2.0","id":"hearth-roots-2","result":{"roots":[{"uri":"file:///srv/repo/"}]}}`)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
	p, _ = toolPayload(t, c.recvResponse())
	if roots, _ := p["roots"].([]any); len(roots) != 1 || roots[0] != "/srv/repo" {
		t.Fatalf("roots after the change: %v", p)
	}
}

// TestNoRootsRequestWithoutTheCapability: a client that did not declare
// roots is never sent a request it cannot answer.
func TestNoRootsRequestWithoutTheCapability(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if m := c.recv(); m["id"] != 1.0 {
		t.Fatalf("want only the ping's answer, got %v", m)
	}
}

// TestRootsNeverAnswered: a client that declares roots and never answers
// costs one call the bounded wait, then calls go on without roots.
func TestRootsNeverAnswered(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	c := startSession(t, srv)
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"test","version":"1"}}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if req := c.recv(); req["method"] != "roots/list" {
		t.Fatalf("want roots/list, got %v", req)
	}
	for id := 1; id <= 2; id++ {
		c.sendf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`, id)
		if p, isErr := toolPayload(t, c.recvResponse()); isErr || p["roots"] != nil {
			t.Fatalf("call %d: %v", id, p)
		}
	}
}

// TestDaemonWideHeldBound: every connection's pending requests together may
// hold at most MaxHeldBytes. Past it a connection with something pending is
// refused QUEUE_OVERLOADED, while an idle connection is still served; the
// budget comes back when the calls end.
func TestDaemonWideHeldBound(t *testing.T) {
	srv, tt := newTestServer(t, Options{MaxHeldBytes: 1 << 20})
	big := func(id int) string { // over 1 MiB decoded with what it holds
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"},"pad":[%s0]}}`,
			id, strings.Repeat("0,", 200_000))
	}
	a := startSession(t, srv)
	a.initialize()
	a.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
	waitFor(t, func() bool { return tt.count("block") == 1 })
	b := startSession(t, srv)
	b.initialize()
	b.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
	waitFor(t, func() bool { return tt.count("block") == 2 })
	// a's block is pending: its big request would pass the daemon-wide bound.
	a.send(big(2))
	if r := a.recv(); r["id"] != 2.0 {
		t.Fatalf("a 2: %v", r)
	} else if p, isErr := toolPayload(t, r); !isErr || p["code"] != "QUEUE_OVERLOADED" || !strings.Contains(p["message"].(string), "daemon") {
		t.Fatalf("a 2: %v", r)
	}
	// An idle connection is served whatever the others hold.
	c := startSession(t, srv)
	c.initialize()
	c.send(big(3))
	if r := c.recv(); r["id"] != 3.0 {
		t.Fatalf("c 3: %v", r)
	} else if _, isErr := toolPayload(t, r); isErr {
		t.Fatalf("an idle connection was refused: %v", r)
	}
	if n := srv.Counters().Overloaded; n != 1 {
		t.Fatalf("overloaded %d", n)
	}
	close(tt.release)
	a.recv()
	b.recv()
	waitFor(t, func() bool { return srv.Counters().HeldBytes == 0 })
}
