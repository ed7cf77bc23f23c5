//go:build unix

package hosted

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-mcp/hearth/pkg/keeper"
)

// The test binary doubles as the upstream servers the tests host: run with
// HOSTED_TEST_SERVER set, it is the server that variable names. It is also
// the keeper of the supervisor's upstreams, as hearthd is.
func TestMain(m *testing.M) {
	keeper.Main()
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
	case "leftover":
		return leftover()
	case "leaky":
		// The first start leaves a descendant in a session of its own that
		// holds its stdout (leftover), then serves as normal.
		mark := os.Getenv("HOSTED_LEFTOVER")
		if _, err := os.Stat(mark); err != nil {
			exe, _ := os.Executable()
			env := []string{"HOSTED_TEST_SERVER=leftover", "HOSTED_LEFTOVER=" + mark} // the first of a name wins
			p, err := os.StartProcess(exe, []string{exe}, &os.ProcAttr{Env: env, Files: []*os.File{nil, os.Stdout, os.Stderr},
				Sys: &syscall.SysProcAttr{Setsid: true}})
			if err != nil {
				return 1
			}
			os.WriteFile(mark, []byte(strconv.Itoa(p.Pid)), 0o600)
		}
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
	// count counts its calls in memory, and says how many initialize
	// requests the server got: state a hand-over must keep.
	var calls, inits atomic.Int32
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "initialize" {
				inits.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "count"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d %d", calls.Add(1), inits.Load())}}}, nil, nil
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
	type slowArgs struct {
		Ms int `json:"ms"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, a slowArgs) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(a.Ms) * time.Millisecond):
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept"}}}, nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
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

// leftover waits until the test says the upstream that started it died
// (it creates $HOSTED_LEFTOVER.go once hearth noticed the death), then
// writes a notification to the stdout it inherited, again and again,
// as a descendant left behind by a crashed server might; a closed pipe does
// not stop it. It says it wrote one by creating $HOSTED_LEFTOVER.wrote.
func leftover() int {
	signal.Ignore(syscall.SIGPIPE)
	for {
		if _, err := os.Stat(os.Getenv("HOSTED_LEFTOVER") + ".go"); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	line := []byte(`{"jsonrpc":"2.0","method":"notifications/leftover","params":{"from":"the dead upstream's descendant"}}` + "\n")
	os.Stdout.Write(line) // written, or refused by a closed pipe: either way it tried
	os.WriteFile(os.Getenv("HOSTED_LEFTOVER")+".wrote", nil, 0o600)
	for {
		time.Sleep(5 * time.Millisecond)
		os.Stdout.Write(line)
	}
}
