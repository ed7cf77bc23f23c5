package remote

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type textArgs struct {
	Text string `json:"text"`
}

// sdkServer is the Go SDK's MCP server: echo (with a progress
// notification first) and roots (which asks its client for its roots).
func sdkServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes"}, func(ctx context.Context, req *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo:" + a.Text}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "roots", Description: "lists the client's roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		//lint:ignore SA1019 a 2025 server's own request to its client, on the call's stream: what the transport must carry both ways
		r, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d roots: %s", len(r.Roots), r.Roots[0].URI)}}}, nil, nil
	})
	return srv
}

// converse runs a conversation with a real server through a Conn: the
// handshake, the tools, a call with progress, and (where the transport
// lets the server ask) a server-to-client request answered.
func converse(t *testing.T, url string, serverAsks, json bool) {
	t.Helper()
	c, r := dial(t, url, nil)
	write(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := r.next(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	write(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if m := r.next(); len(m["result"].(map[string]any)["tools"].([]any)) != 2 {
		t.Fatalf("tools/list: %v", m)
	}
	write(t, c, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":"p1"}}}`)
	var got []string
	for len(got) < 2 {
		m := r.next()
		if m["method"] == "notifications/progress" {
			got = append(got, "progress")
			continue
		}
		text := m["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
		got = append(got, fmt.Sprint(text))
	}
	// Progress comes first on the call's own stream; a server answering
	// JSON sends it on the GET stream, in no order with the answer.
	want := "progress,echo:hi"
	if json {
		slices.Sort(got)
		want = "echo:hi,progress"
	}
	if strings.Join(got, ",") != want {
		t.Fatalf("call: %v", got)
	}
	if !serverAsks {
		return
	}
	write(t, c, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"roots","arguments":{}}}`)
	ask := r.next()
	if ask["method"] != "roots/list" {
		t.Fatalf("expected the server's roots/list, got %v", ask)
	}
	id, _ := json_(ask["id"])
	write(t, c, `{"jsonrpc":"2.0","id":`+id+`,"result":{"roots":[{"uri":"file:///work"}]}}`)
	m := r.next()
	if text := fmt.Sprint(m["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]); text != "1 roots: file:///work" {
		t.Fatalf("roots: %v", m)
	}
}

func json_(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return `"` + x + `"`, nil
	case float64:
		return fmt.Sprint(int64(x)), nil
	}
	return "", fmt.Errorf("id %v", v)
}

// The Go SDK's Streamable HTTP server, stateful (a session, event-stream
// answers, its requests on the call's stream), answering JSON, and
// stateless; and its 2024-11-05 SSE server, reached by the fallback.
func TestGoSDKServers(t *testing.T) {
	get := func(*http.Request) *mcp.Server { return sdkServer() }
	for _, c := range []struct {
		name       string
		handler    http.Handler
		path       string
		serverAsks bool
	}{
		{"streamable", mcp.NewStreamableHTTPHandler(get, nil), "/mcp", true},
		{"streamable with resumption", mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}), "/mcp", true},
		{"json answers", mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{JSONResponse: true}), "/mcp", false},
		{"stateless", mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true}), "/mcp", false},
		{"sse (2024-11-05)", mcp.NewSSEHandler(get, nil), "/sse", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := serve(t, c.handler)
			converse(t, srv.URL+c.path, c.serverAsks, c.name == "json answers")
		})
	}
}
