package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hearth-mcp/hearth/pkg/localsock"
	"github.com/hearth-mcp/hearth/pkg/version"
)

// daemonTool calls one tool of the daemon on socket over MCP, as the client
// named client, and decodes its structured result into out; a tool error or
// a JSON-RPC error is returned with its message. The socket must be the
// user's own. The call may take timeout, plus 10 s for the exchange.
func daemonTool(socket, client, name string, args map[string]any, timeout time.Duration, out any) error {
	raw, err := daemonRequest(socket, client, "tools/call", map[string]any{"name": name, "arguments": args}, timeout)
	if err != nil {
		return err
	}
	var res struct {
		Structured json.RawMessage `json:"structuredContent"`
		Content    []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("the daemon's reply: %w", err)
	}
	if res.IsError {
		var e struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		if len(res.Content) > 0 { // an error is in the text only (docs/protocol.md)
			json.Unmarshal([]byte(res.Content[0].Text), &e)
		}
		return fmt.Errorf("%s failed: %s (%s)", name, e.Message, e.Code)
	}
	return json.Unmarshal(res.Structured, out)
}

// daemonRequest sends one request of method with params to the daemon on
// socket, after an MCP initialize as the client named client, and returns
// its result; a JSON-RPC error is returned with its message. The socket
// must be the user's own. The request may take timeout, plus 10 s for the
// exchange. It dials as the shim does (localsock.Dial): a socket, or a
// process serving it, of another user is refused before a byte is sent.
func daemonRequest(socket, client, method string, params any, timeout time.Duration) (json.RawMessage, error) {
	c, err := localsock.Dial(socket)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout + 10*time.Second))
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriter(c)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":%q,"version":%q}}}`+"\n", client, version.Tooling())
	fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	w.Write(append(req, '\n'))
	if err := w.Flush(); err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(c, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("reading the daemon's reply: %w", err)
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &msg) != nil || string(msg.ID) != "2" {
			continue
		}
		switch {
		case msg.Error != nil:
			return nil, &replyError{code: msg.Error.Code, message: msg.Error.Message}
		case len(msg.Result) == 0 || string(msg.Result) == "null":
			return nil, errors.New("the daemon's reply has no result")
		}
		return msg.Result, nil
	}
}

// replyError is the daemon's error reply: it read the request and refused
// it (any other error of daemonRequest may have come before it read it).
// code is its JSON-RPC code (method not found: a daemon older than the
// request).
type replyError struct {
	code    int
	message string
}

func (e *replyError) Error() string { return e.message }
