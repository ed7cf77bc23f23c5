// Command leaver is a Go MCP client that leaves its server behind (the
// orphan sweep's end-to-end test, test/sweep_test.go): the go-sdk's
// CommandTransport starts the command with pipes for its stdio, as Go
// clients do, lists its tools, prints {"pid": the server's pid, "tools":
// how many} and waits until the test kills it with SIGKILL.
//
//	leaver COMMAND ARGS...
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: leaver COMMAND ARGS...")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "sweep-test-go-client", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "leaver:", err)
		os.Exit(1)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "leaver:", err)
		os.Exit(1)
	}
	b, _ := json.Marshal(map[string]int{"pid": cmd.Process.Pid, "tools": len(tools.Tools)})
	fmt.Println(string(b))
	for {
		time.Sleep(time.Hour) // until SIGKILL
	}
}
