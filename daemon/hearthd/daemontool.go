package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/hearth-mcp/hearth/pkg/version"
)

// daemonTool calls one tool of the daemon on socket over MCP, as the client
// named client, and decodes its structured result into out; a tool error or
// a JSON-RPC error is returned with its message. The socket must be the
// user's own. The call may take timeout, plus 10 s for the exchange.
func daemonTool(socket, client, name string, args map[string]any, timeout time.Duration, out any) error {
	var st syscall.Stat_t
	if err := syscall.Stat(socket, &st); err != nil {
		return err
	}
	if int(st.Uid) != os.Getuid() {
		return fmt.Errorf("the socket %s belongs to uid %d, not to you; refusing to talk to it", socket, st.Uid)
	}
	c, err := net.DialTimeout("unix", socket, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout + 10*time.Second))
	call, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	if err != nil {
		return err
	}
	w := bufio.NewWriter(c)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":%q,"version":%q}}}`+"\n", client, version.Tooling())
	fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	w.Write(append(call, '\n'))
	if err := w.Flush(); err != nil {
		return err
	}
	r := bufio.NewReaderSize(c, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("reading the daemon's reply: %w", err)
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result *struct {
				Structured json.RawMessage `json:"structuredContent"`
				Content    []struct {
					Text string `json:"text"`
				} `json:"content"`
				IsError bool `json:"isError"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &msg) != nil || string(msg.ID) != "2" {
			continue
		}
		switch {
		case msg.Error != nil:
			return errors.New(msg.Error.Message)
		case msg.Result == nil:
			return errors.New("the daemon's reply has no result")
		case msg.Result.IsError:
			var e struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			}
			if len(msg.Result.Content) > 0 { // an error is in the text only (docs/protocol.md)
				json.Unmarshal([]byte(msg.Result.Content[0].Text), &e)
			}
			return fmt.Errorf("%s failed: %s (%s)", name, e.Message, e.Code)
		}
		return json.Unmarshal(msg.Result.Structured, out)
	}
}
