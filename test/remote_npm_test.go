//go:build unix

package test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-mcp/hearth/pkg/remote"
)

// server-everything from npm over its Streamable HTTP and its 2024-11-05
// SSE transport, reached through pkg/remote (the second by the fallback
// from the URL alone): the tools it lists are those the Go SDK's own client
// lists from it (declaring the same capabilities: server-everything offers
// get-roots-list to a client with roots), and a call is answered.
func TestRemoteServerEverything(t *testing.T) {
	server := npmServer(t, "server-everything")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []struct{ arg, path string }{{"streamableHttp", "/mcp"}, {"sse", "/sse"}} {
		t.Run(mode.arg, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := l.Addr().(*net.TCPAddr).Port
			l.Close()
			cmd := exec.Command(node, server, mode.arg)
			cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			url := fmt.Sprintf("http://127.0.0.1:%d%s", port, mode.path)
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
					c.Close()
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("server-everything never listened")
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			var transport mcp.Transport = &mcp.StreamableClientTransport{Endpoint: url}
			if mode.arg == "sse" {
				transport = &mcp.SSEClientTransport{Endpoint: url}
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil).Connect(ctx, transport, nil)
			if err != nil {
				t.Fatal(err)
			}
			direct, err := cs.ListTools(ctx, nil)
			cs.Close()
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, tool := range direct.Tools {
				want = append(want, tool.Name)
			}

			c, err := remote.Dial(remote.Options{URL: url, Name: "everything"})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			out := bufio.NewScanner(c.Stdout())
			out.Buffer(nil, 64<<20)
			next := func(id int) map[string]json.RawMessage {
				t.Helper()
				for out.Scan() {
					var m map[string]json.RawMessage
					json.Unmarshal(out.Bytes(), &m)
					if string(m["id"]) == fmt.Sprint(id) && m["method"] == nil {
						return m
					}
				}
				t.Fatalf("no answer to %d", id)
				return nil
			}
			c.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"hearth","version":"1"}}}`), "")
			if m := next(1); m["result"] == nil {
				t.Fatalf("initialize: %s", m["error"])
			}
			c.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "")
			c.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), "")
			var list struct {
				Tools []struct{ Name string } `json:"tools"`
			}
			json.Unmarshal(next(2)["result"], &list)
			var got []string
			for _, tool := range list.Tools {
				got = append(got, tool.Name)
			}
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Fatalf("through pkg/remote %v, directly %v", got, want)
			}
			c.Write([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"over http"}}}`), "")
			var res struct {
				Content []struct{ Text string } `json:"content"`
			}
			json.Unmarshal(next(3)["result"], &res)
			if len(res.Content) == 0 || res.Content[0].Text != "Echo: over http" {
				t.Fatalf("echo: %+v", res)
			}
		})
	}
}
