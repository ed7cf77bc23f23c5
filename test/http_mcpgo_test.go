//go:build unix

package test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	gomcp "github.com/mark3labs/mcp-go/mcp"
)

// samplerFunc is an mcp-go sampling handler.
type samplerFunc func(context.Context, gomcp.CreateMessageRequest) (*gomcp.CreateMessageResult, error)

func (f samplerFunc) CreateMessage(ctx context.Context, r gomcp.CreateMessageRequest) (*gomcp.CreateMessageResult, error) {
	return f(ctx, r)
}

// mcpGoClient connects mark3labs/mcp-go's streamable client, with its
// default options (it opens no GET stream), to url.
func mcpGoClient(t *testing.T, url, token string, sampler samplerFunc) *mcpgo.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := mcpgo.NewClient(tr, mcpgo.WithSamplingHandler(sampler))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("mcp-go start: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	init := gomcp.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = gomcp.Implementation{Name: "mcp-go-test", Version: "1"}
	init.Params.Capabilities.Sampling = &gomcp.SamplingCapability{}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("mcp-go initialize: %v", err)
	}
	return c
}

func mcpGoText(res *gomcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(gomcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// A hosted server's progress and sampling reach a client that listens only
// on its POSTs' streams (mcp-go's default: no GET stream), as the transport
// says messages about a request go; a sampling request that client never
// answers ends after the server's answer_timeout, which frees the instance
// for another client's sampling (docs/protocol.md, "Hosted servers over
// HTTP"; decision 0035).
func TestHTTPHostedMcpGoClient(t *testing.T) {
	dir := shortTempDir(t)
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[servers.echo]\ncommand = %q\nsharing = \"global\"\nanswer_timeout = \"2s\"\n", filepath.Join(bin.dir, "hostedserver"))), 0o600)
	d := startHTTPDaemon(t, "HEARTH_CONFIG="+cfg)
	url := strings.TrimSuffix(d.url, "/mcp") + "/servers/echo/mcp"

	asked := make(chan string, 4)
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	a := mcpGoClient(t, url, d.token, func(ctx context.Context, r gomcp.CreateMessageRequest) (*gomcp.CreateMessageResult, error) {
		asked <- "a"
		select { // a client that never answers
		case <-hang:
		case <-ctx.Done():
		}
		return nil, fmt.Errorf("never answered")
	})
	progress := make(chan gomcp.JSONRPCNotification, 8)
	a.OnNotification(func(n gomcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			progress <- n
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := gomcp.CallToolRequest{}
	req.Params.Name = "sleep"
	req.Params.Arguments = map[string]any{"ms": 100}
	req.Params.Meta = &gomcp.Meta{ProgressToken: "p1"}
	if res, err := a.CallTool(ctx, req); err != nil || mcpGoText(res) != "slept" {
		t.Fatalf("sleep: %v %+v\n%s", err, res, d.stderr.String())
	}
	select {
	case n := <-progress:
		if tok := n.Params.AdditionalFields["progressToken"]; tok != "p1" {
			t.Fatalf("progress for %v, want p1", tok)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the mcp-go client never got the hosted server's progress")
	}

	var wg sync.WaitGroup
	var aRes *gomcp.CallToolResult
	var aErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		req := gomcp.CallToolRequest{}
		req.Params.Name = "sample"
		req.Params.Arguments = map[string]any{"text": "hi"}
		aRes, aErr = a.CallTool(ctx, req)
	}()
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		t.Fatalf("the mcp-go client never got the hosted server's sampling request\n%s", d.stderr.String())
	}
	wg.Wait()
	if aErr != nil || !aRes.IsError || !strings.Contains(mcpGoText(aRes), "did not answer sampling/createMessage within 2s") {
		t.Fatalf("a's sample, unanswered: %v %+v", aErr, aRes)
	}

	b := mcpGoClient(t, url, d.token, func(_ context.Context, r gomcp.CreateMessageRequest) (*gomcp.CreateMessageResult, error) {
		asked <- "b"
		res := &gomcp.CreateMessageResult{Model: "m", StopReason: "endTurn"}
		res.Role = gomcp.RoleAssistant
		res.Content = gomcp.NewTextContent("b's answer")
		return res, nil
	})
	req = gomcp.CallToolRequest{}
	req.Params.Name = "sample"
	req.Params.Arguments = map[string]any{"text": "hi"}
	res, err := b.CallTool(ctx, req)
	if err != nil || mcpGoText(res) != "sampled: b's answer" {
		t.Fatalf("b's sample after a's went unanswered: %v %+v", err, res)
	}
	if who := <-asked; who != "b" {
		t.Fatalf("b's sampling went to %s", who)
	}
}
