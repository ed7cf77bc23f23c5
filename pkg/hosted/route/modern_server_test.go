package route

//lint:file-ignore SA1019 the modern test upstream logs per request (logging is deprecated in 2026-07-28 but still served)

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newModernServer is a go-sdk server that speaks only 2026-07-28: it
// refuses initialize, answers server/discover, and asks for sampling,
// elicitation and roots with InputRequiredResults. Its echo, wait and
// resource are those of newTestServer.
func newModernServer() *testServer {
	ts := newTestServerWith(&mcp.ServerOptions{SupportedProtocolVersions: []string{"2026-07-28"}}, false)
	ts.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "initialize" {
				return nil, &jsonrpc.Error{Code: -32601, Message: "initialize is not supported: this server speaks 2026-07-28 only"}
			}
			return next(ctx, method, req)
		}
	})
	type textArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(ts.srv, &mcp.Tool{Name: "sample", Description: "asks for sampling with an InputRequiredResult"}, func(_ context.Context, req *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		if res, ok := req.Params.InputResponses["s"].(*mcp.CreateMessageWithToolsResult); ok {
			var text string
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					text += tc.Text
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sampled: " + text}}}, nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"s": &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: a.Text}}}}}}, nil, nil
	})
	mcp.AddTool(ts.srv, &mcp.Tool{Name: "ask", Description: "asks for roots and an elicitation in one round, keeping state"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		roots, rok := req.Params.InputResponses["roots"].(*mcp.ListRootsResult)
		el, eok := req.Params.InputResponses["name"].(*mcp.ElicitResult)
		if rok && eok && req.Params.RequestState == "state-1" {
			var uris []string
			for _, r := range roots.Roots {
				uris = append(uris, r.URI)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(uris, ",") + " " + el.Action + " " + el.Content["name"].(string)}}}, nil, nil
		}
		return &mcp.CallToolResult{RequestState: "state-1", InputRequests: mcp.InputRequestMap{
			"roots": &mcp.ListRootsParams{},
			"name":  &mcp.ElicitParams{Message: "your name?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}},
		}}, nil, nil
	})
	return ts
}
