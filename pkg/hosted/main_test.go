package hosted

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as the upstream servers the tests host: run with
// HOSTED_TEST_SERVER set, it is the server that variable names.
func TestMain(m *testing.M) {
	if mode := os.Getenv("HOSTED_TEST_SERVER"); mode != "" {
		os.Exit(serve(mode))
	}
	os.Exit(m.Run())
}

func serve(mode string) int {
	switch mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: cannot open the widget database")
		return 3
	case "garbage":
		fmt.Println("Server listening on port 3000")
		time.Sleep(time.Minute)
		return 0
	case "silent":
		// Reads and never answers.
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
		}
		time.Sleep(time.Minute)
		return 0
	case "refuse-then-silent":
		// Refuses initialize, then never answers (the probe included).
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.Method == "initialize" {
				fmt.Printf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"no sessions here"}}`+"\n", m.ID)
			}
		}
		time.Sleep(time.Minute)
		return 0
	case "stubborn":
		// Ignores SIGTERM and its stdin closing.
		signal.Ignore(syscall.SIGTERM)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "hostedtest", Version: "1"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text + " from " + fmt.Sprint(os.Getpid())}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "env"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		wd, _ := os.Getwd()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: os.Getenv(a.Text) + "|" + wd}}}, nil, nil
	})
	type bigArgs struct {
		Size int `json:"size"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "big"}, func(_ context.Context, _ *mcp.CallToolRequest, a bigArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", a.Size)}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "hang"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	err := srv.Run(context.Background(), &mcp.StdioTransport{})
	if mode == "stubborn" {
		for {
			time.Sleep(time.Hour)
		}
	}
	if err != nil {
		return 1
	}
	return 0
}
