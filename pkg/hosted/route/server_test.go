package route

//lint:file-ignore SA1019 the test upstream makes the 2025-era requests (sampling, roots, logging) that 2026-07-28 deprecates, for the router to route

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testServer is the go-sdk server the router tests host. Its "wait" tool
// blocks until the test releases it (or it is cancelled), after sending a
// progress notification and a log message, so tests can hold several
// clients' calls in flight at once.
type testServer struct {
	srv *mcp.Server
	// laterRoots gets what each roots/list the "roots-later" tool made
	// after its call was answered came back with.
	laterRoots chan string

	mu        sync.Mutex
	release   map[string]chan struct{}
	started   map[string]chan struct{}
	cancelled []string
	subs      []string // "+uri" and "-uri" as the upstream saw them
}

func newTestServer() *testServer { return newTestServerWith(&mcp.ServerOptions{}, true) }

// newTestServerWith builds the test server on opts; legacy adds the tools
// that make 2025-era requests of the client (sample, roots).
func newTestServerWith(opts *mcp.ServerOptions, legacy bool) *testServer {
	ts := &testServer{release: map[string]chan struct{}{}, started: map[string]chan struct{}{}, laterRoots: make(chan string, 4)}
	opts.Instructions = "a server of the router's tests"
	opts.SubscribeHandler = func(_ context.Context, req *mcp.SubscribeRequest) error {
		ts.mu.Lock()
		ts.subs = append(ts.subs, "+"+req.Params.URI)
		ts.mu.Unlock()
		return nil
	}
	opts.UnsubscribeHandler = func(_ context.Context, req *mcp.UnsubscribeRequest) error {
		ts.mu.Lock()
		ts.subs = append(ts.subs, "-"+req.Params.URI)
		ts.mu.Unlock()
		return nil
	}
	ts.srv = mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1.0.0"}, opts)
	type textArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(ts.srv, &mcp.Tool{Name: "echo", Description: "echoes text"}, func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	type waitArgs struct {
		Key string `json:"key"`
	}
	mcp.AddTool(ts.srv, &mcp.Tool{Name: "wait", Description: "waits to be released"}, func(ctx context.Context, req *mcp.CallToolRequest, a waitArgs) (*mcp.CallToolResult, any, error) {
		rel, st := ts.gate(a.Key)
		if tok := req.Params.GetProgressToken(); tok != nil {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "progress of " + a.Key})
		}
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "log of " + a.Key})
		close(st)
		select {
		case <-rel:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released " + a.Key}}}, nil, nil
		case <-ctx.Done():
			ts.mu.Lock()
			ts.cancelled = append(ts.cancelled, a.Key)
			ts.mu.Unlock()
			return nil, nil, ctx.Err()
		}
	})
	ts.srv.AddResource(&mcp.Resource{URI: "test://a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://a", Text: "a"}}}, nil
	})
	if !legacy {
		return ts
	}
	mcp.AddTool(ts.srv, &mcp.Tool{Name: "sample", Description: "asks its client to sample"}, func(ctx context.Context, req *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: a.Text}}}})
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "sampling failed: " + err.Error()}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sampled: " + res.Content.(*mcp.TextContent).Text}}}, nil, nil
	})
	mcp.AddTool(ts.srv, &mcp.Tool{Name: "roots", Description: "lists its client's roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "roots failed: " + err.Error()}}}, nil, nil
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(uris, ",")}}}, nil, nil
	})
	// roots-later asks for roots of its own accord once the test releases
	// its key, after its call was answered: as server-filesystem does after
	// initialize, with no request of a client in flight.
	mcp.AddTool(ts.srv, &mcp.Tool{Name: "roots-later", Description: "lists roots after its call"}, func(_ context.Context, req *mcp.CallToolRequest, a waitArgs) (*mcp.CallToolResult, any, error) {
		rel, st := ts.gate(a.Key)
		close(st)
		go func() {
			<-rel
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				ts.laterRoots <- "error: " + err.Error()
				return
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			ts.laterRoots <- strings.Join(uris, ",")
		}()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "later"}}}, nil, nil
	})
	return ts
}

func (ts *testServer) gate(key string) (release, started chan struct{}) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.release[key] == nil {
		ts.release[key] = make(chan struct{})
	}
	if ts.started[key] == nil {
		ts.started[key] = make(chan struct{})
	}
	return ts.release[key], ts.started[key]
}

// waitStarted blocks until the wait call of key runs.
func (ts *testServer) waitStarted(key string) {
	_, st := ts.gate(key)
	<-st
}

func (ts *testServer) releaseKey(key string) {
	rel, _ := ts.gate(key)
	close(rel)
}

func (ts *testServer) cancelledKeys() string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return strings.Join(ts.cancelled, ",")
}

func (ts *testServer) subscriptions() string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return strings.Join(ts.subs, ",")
}

func callFrame(id, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

func callWithToken(id, tool, args, token string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"progressToken":%s}}}`, id, tool, args, token)
}
