// Command hostedserver is a go-sdk MCP server the end-to-end tests host
// behind `hearth run`: it answers with its pid, so tests can tell whether
// clients share it, and has tools that wait, sample, report progress and
// log, to hold calls in flight, and one that adds a tool (a list change).
package main

//lint:file-ignore SA1019 this server makes the 2025-era requests (sampling, roots, logging) that 2026-07-28 deprecates, for hearth to route

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	// -sleeper: only sleep; -tree starts one, a child of the server, so a
	// test can see the server's whole tree end.
	if len(os.Args) > 1 && os.Args[1] == "-sleeper" {
		time.Sleep(time.Hour)
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "-tree" {
		if self, err := os.Executable(); err == nil {
			_ = exec.Command(self, "-sleeper").Start()
		}
	}
	// -stubborn: ignore SIGTERM and stdin closing, as servers that leave
	// orphans do; only SIGKILL ends it.
	stubborn := len(os.Args) > 1 && os.Args[1] == "-stubborn"
	if stubborn {
		signal.Ignore(syscall.SIGTERM)
	}
	modern := len(os.Args) > 1 && os.Args[1] == "-modern"
	// -refuse: refuse initialize and server/discover alike, as a server
	// that speaks neither era hearth knows.
	refuse := len(os.Args) > 1 && os.Args[1] == "-refuse"
	opts := &mcp.ServerOptions{Instructions: "the tests' own hosted server"}
	if modern {
		opts.SupportedProtocolVersions = []string{"2026-07-28"}
	}
	// -cache-ttl=MS: every cacheable result (server/discover, the lists)
	// says it is fresh for MS milliseconds (2026-07-28 caching), where the
	// go-sdk's default, 0, is stale at once.
	for _, a := range os.Args[1:] {
		if v, ok := strings.CutPrefix(a, "-cache-ttl="); ok {
			ms, _ := strconv.Atoi(v)
			opts.SetCacheable = func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.TTLMs = ms }
		}
	}
	// -subscribe: offer resource subscriptions, count each subscribe by
	// URI (the "subscribes" tool says how many came) and send
	// notifications/resources/updated for a URI on "touch".
	var subscribes sync.Map // uri -> *atomic.Int64
	if len(os.Args) > 1 && os.Args[1] == "-subscribe" {
		opts.SubscribeHandler = func(_ context.Context, req *mcp.SubscribeRequest) error {
			n, _ := subscribes.LoadOrStore(req.Params.URI, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
			return nil
		}
		opts.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "hostedserver", Version: "1.0.0"}, opts)
	if opts.SubscribeHandler != nil {
		srv.AddResource(&mcp.Resource{URI: "test://counter", Name: "counter"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://counter", Text: "counter"}}}, nil
		})
		mcp.AddTool(srv, &mcp.Tool{Name: "subscribes", Description: "says how many resources/subscribe came for the URI text"}, func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			var n int64
			if v, ok := subscribes.Load(a.Text); ok {
				n = v.(*atomic.Int64).Load()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(n)}}}, nil, nil
		})
		mcp.AddTool(srv, &mcp.Tool{Name: "touch", Description: "sends notifications/resources/updated for the URI text"}, func(ctx context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			if err := srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: a.Text}); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "touched " + a.Text}}}, nil, nil
		})
	}
	if modern || refuse {
		srv.AddReceivingMiddleware(refuseInitialize)
	}
	if refuse {
		srv.AddReceivingMiddleware(refuseMethod("server/discover"))
	}
	// -extra-tools=FILE: one more tool for each line of FILE, so that a
	// test changes the tool list between runs without changing the
	// server's command line (what hearth's catalog compares).
	for _, a := range os.Args[1:] {
		if file, ok := strings.CutPrefix(a, "-extra-tools="); ok {
			b, _ := os.ReadFile(file)
			for _, name := range strings.Fields(string(b)) {
				mcp.AddTool(srv, &mcp.Tool{Name: name, Description: "listed by -extra-tools"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil, nil
				})
			}
		}
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes text with the server's pid"}, func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s pid=%d", a.Text, os.Getpid())}}}, nil, nil
	})
	// count counts its calls in memory and says how many initialize
	// requests the server got: state that a hand-over of the upstream
	// keeps and a restart of it loses.
	// -shuffle: every tools/list answer lists the tools out of order, in
	// an order of its process and call (rotated by 1 + (pid + calls) mod
	// (n-1), never by none), as servers that keep their tools in a map do.
	if slices.Contains(os.Args[1:], "-shuffle") {
		var lists atomic.Int64
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				if lt, ok := res.(*mcp.ListToolsResult); ok && err == nil && len(lt.Tools) > 2 {
					n := 1 + (os.Getpid()+int(lists.Add(1)))%(len(lt.Tools)-1)
					lt.Tools = append(lt.Tools[n:], lt.Tools[:n]...)
				}
				return res, err
			}
		})
	}
	var calls, inits atomic.Int64
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "initialize" {
				inits.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "count", Description: "counts its calls in memory: calls=N inits=M pid=P"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("calls=%d inits=%d pid=%d", calls.Add(1), inits.Load(), os.Getpid())}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "cwd", Description: "says the directory the server runs in"}, func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		dir, err := os.Getwd()
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s pid=%d", dir, os.Getpid())}}}, nil, nil
	})
	type sleepArgs struct {
		Ms int `json:"ms"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "sleep", Description: "sleeps, reporting progress"}, func(ctx context.Context, req *mcp.CallToolRequest, a sleepArgs) (*mcp.CallToolResult, any, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2})
		}
		select {
		case <-time.After(time.Duration(a.Ms) * time.Millisecond):
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept"}}}, nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	type blockArgs struct {
		Record string `json:"record"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "block", Description: "waits until cancelled or a minute has passed, writing to the file record what happened: started, then cancelled or completed"}, func(ctx context.Context, _ *mcp.CallToolRequest, a blockArgs) (*mcp.CallToolResult, any, error) {
		note := func(what string) {
			if f, err := os.OpenFile(a.Record, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
				fmt.Fprintln(f, what)
				f.Close()
			}
		}
		note("started")
		select {
		case <-time.After(time.Minute):
			note("completed")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "completed"}}}, nil, nil
		case <-ctx.Done():
			note("cancelled")
			return nil, nil, ctx.Err()
		}
	})
	if modern {
		mcp.AddTool(srv, &mcp.Tool{Name: "sample", Description: "asks its client to sample, with an InputRequiredResult"}, sampleInput)
	} else {
		mcp.AddTool(srv, &mcp.Tool{Name: "sample", Description: "asks its client to sample"}, sampleRequest)
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "add_tool", Description: "adds a tool named text, changing the tool list"}, func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(srv, &mcp.Tool{Name: a.Text, Description: "added at run time"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "I was added"}}}, nil, nil
		})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added " + a.Text}}}, nil, nil
	})
	err := srv.Run(context.Background(), &mcp.StdioTransport{})
	if stubborn {
		select {}
	}
	if err != nil {
		os.Exit(1)
	}
}

type textArgs struct {
	Text string `json:"text"`
}

// sampleRequest samples with a request to its client (the 2025 way).
func sampleRequest(ctx context.Context, req *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
	res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
		Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: a.Text}}}})
	if err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "sampling failed: " + err.Error()}}}, nil, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sampled: " + res.Content.(*mcp.TextContent).Text}}}, nil, nil
}

// sampleInput samples the 2026-07-28 way: an InputRequiredResult, then the
// retry that carries the answer.
func sampleInput(_ context.Context, req *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
	if res, ok := req.Params.InputResponses["s"].(*mcp.CreateMessageWithToolsResult); ok {
		text := ""
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sampled: " + text}}}, nil, nil
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"s": &mcp.CreateMessageParams{MaxTokens: 10,
		Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: a.Text}}}}}}, nil, nil
}

// refuseInitialize makes the server modern-only: it refuses initialize
// (the go-sdk words the error as an unknown method's).
func refuseInitialize(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "initialize" {
			return nil, &jsonrpc.Error{Code: -32601, Message: "initialize is not supported: this server speaks 2026-07-28 only"}
		}
		return next(ctx, method, req)
	}
}

// refuseMethod answers a method with -32601.
func refuseMethod(name string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == name {
				return nil, &jsonrpc.Error{Code: -32601, Message: name + " refused by -refuse"}
			}
			return next(ctx, method, req)
		}
	}
}
