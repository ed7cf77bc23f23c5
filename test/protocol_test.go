//go:build unix

package test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBadInputOverSocket sends the bad-input table to the real daemon on one
// connection: every row gets a clear error and the connection keeps serving,
// and a second client is served throughout.
func TestBadInputOverSocket(t *testing.T) {
	d := startDaemon(t)
	bystander := dialRaw(t, d.socket)
	bystander.initialize()
	c := dialRaw(t, d.socket)

	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if line := c.recv(); !strings.Contains(line, `"code":-32600`) {
		t.Fatalf("request before initialize: %s", line)
	}
	c.initialize()
	pad := func(n int) string {
		head := `{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"`
		return head + strings.Repeat("x", n-len(head)-3) + `"}}`
	}
	rows := []struct{ name, frame, want string }{
		{"malformed JSON", `{"jsonrpc":`, `"id":null,"error":{"code":-32700`},
		{"1 MiB + 1", pad(1<<20 + 1), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"payload_too_large","data":{"ok":false,"reason":"validation_failed","errors":[{"path":"","msg":"payload_too_large"}]}}}`},
		{"exactly 1 MiB", pad(1 << 20), `{"jsonrpc":"2.0","id":"big","result":{}}`},
		{"batch", `[{"jsonrpc":"2.0","id":2,"method":"ping"}]`, `"code":-32600`},
		{"non-object", `17`, `"code":-32600`},
		{"missing jsonrpc", `{"id":3,"method":"ping"}`, `"id":3,"error":{"code":-32600`},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, `"id":null,"error":{"code":-32600`},
		{"id object", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, `"code":-32600`},
		{"id bool", `{"jsonrpc":"2.0","id":false,"method":"ping"}`, `"code":-32600`},
		{"unknown method", `{"jsonrpc":"2.0","id":4,"method":"resources/subscribe"}`, `"id":4,"error":{"code":-32601`},
		{"unknown tool", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rm_rf"}}`, `"id":5,"error":{"code":-32602`},
		{"unknown argument", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"daemon_status","arguments":{"x":1}}}`, `\"code\":\"INVALID_REQUEST\"`},
		{"ill-typed arguments", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"daemon_status","arguments":"x"}}`, `\"code\":\"INVALID_REQUEST\"`},
		{"a million-digit limit", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"search_memory","arguments":{"query":"x","limit":` + strings.Repeat("7", 1_000_000) + `}}}`, `more than 1000 digits`},
		{"100 000-deep nesting", `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"a":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}}`, `"code":-32700`},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":{\"s\":\"\xff\xfe\"}}", `"code":-32700`},
	}
	// An integer argument takes an integral number however it is written;
	// one that fits no integer is out of range at its path.
	call := func(id int, name, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args)
	}
	for i, lit := range []string{"50", "50.0", "5e1", "5.0e1", "500e-1"} {
		rows = append(rows, struct{ name, frame, want string }{"limit " + lit, call(20+i, "search_memory", `{"query":"x","limit":`+lit+`}`), `\"workspace_id\":\"default\"`})
	}
	rows = append(rows,
		struct{ name, frame, want string }{"context_lines -0", call(30, "search", `{"query":"x","context_lines":-0}`), `\"code\":\"NOT_FOUND\"`},
		struct{ name, frame, want string }{"start_line 1e400", call(31, "show_file", `{"path":"x","start_line":1e400}`), `/start_line: number out of range`})
	for i, row := range rows {
		c.send(row.frame)
		if line := c.recv(); !strings.Contains(line, row.want) {
			t.Errorf("%s: got %.300s", row.name, line)
		} else if len(line) > 1024 {
			t.Errorf("%s: reply is %d bytes", row.name, len(line))
		}
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"ok%d","method":"ping"}`, i))
		if line := c.recv(); line != fmt.Sprintf(`{"jsonrpc":"2.0","id":"ok%d","result":{}}`, i) {
			t.Fatalf("%s: connection stopped serving: %s", row.name, line)
		}
		bystander.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))
		if line := bystander.recv(); !strings.Contains(line, `"result"`) {
			t.Fatalf("%s: the other client was disturbed: %s", row.name, line)
		}
	}
}

// TestAnsweredUnderLoad: 16 connections each pipeline 1000 requests. On
// initialized (MCP) connections, pings and tool calls mixed, every request
// is answered exactly once with its own id, in whatever order they finish;
// on plain connections (no initialize) the replies keep request order.
func TestAnsweredUnderLoad(t *testing.T) {
	d := startDaemon(t)
	const conns, perConn = 16, 1000
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			errs <- pipeline(d.socket, c, perConn, c%2 == 0)
		}(c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// pipeline sends n requests on one connection without waiting and checks
// the replies: each id answered once with a result, and in request order
// when plain (a connection that never initializes keeps the FIFO).
func pipeline(socket string, c, n int, initialized bool) error {
	conn, err := net.Dial("unix", socket)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	w := bufio.NewWriter(conn)
	if initialized {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`+"\n")
	}
	ids := make([]string, n)
	for i := range ids {
		// Alternate number and string ids.
		ids[i] = fmt.Sprint(i)
		if i%2 == 1 {
			ids[i] = fmt.Sprintf("%q", fmt.Sprintf("c%d-%d", c, i))
		}
	}
	go func() {
		for i, id := range ids {
			switch {
			case i%10 != 0:
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"method":"ping"}`+"\n", id)
			case initialized: // every tenth a tool call
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"daemon_status","arguments":{}}}`+"\n", id)
			default: // or a plain tool method
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"method":"list_schemas","params":{}}`+"\n", id)
			}
		}
		w.Flush()
	}()
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	if initialized && !sc.Scan() {
		return fmt.Errorf("conn %d: no initialize reply: %v", c, sc.Err())
	}
	seen := make(map[string]bool, n)
	for i := 0; i < n; i++ {
		if !sc.Scan() {
			return fmt.Errorf("conn %d: stream ended after %d replies: %v", c, i, sc.Err())
		}
		var m struct {
			ID     json.RawMessage
			Result json.RawMessage
			Error  json.RawMessage
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("conn %d reply %d not JSON: %q", c, i, sc.Text())
		}
		id := string(m.ID)
		if m.Result == nil || seen[id] {
			return fmt.Errorf("conn %d reply %d: id %s answered twice or failed: %s", c, i, id, sc.Text())
		}
		seen[id] = true
		if !initialized && id != ids[i] {
			return fmt.Errorf("conn %d reply %d: id %s (want %s: plain replies keep request order), %s", c, i, id, ids[i], sc.Text())
		}
	}
	for _, id := range ids {
		if !seen[id] {
			return fmt.Errorf("conn %d: request %s never answered", c, id)
		}
	}
	return nil
}
