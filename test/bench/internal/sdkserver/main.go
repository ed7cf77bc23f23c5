// Command sdkserver is the peer for hearth's benchmarks: a stdio MCP server
// built with the official go-sdk that serves the same trivial tool as hearth
// (daemon_status, returning a status object of the same shape), so the two
// can be measured side by side in one run.
package main

import (
	"context"
	"log"
	"os"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type status struct {
	Version       string  `json:"version"`
	PID           int     `json:"pid"`
	Mode          string  `json:"mode"`
	StartedAt     string  `json:"started_at"`
	UptimeSeconds float64 `json:"uptime_s"`
	Requests      uint64  `json:"requests"`
}

func main() {
	started := time.Now()
	var calls atomic.Uint64
	s := mcp.NewServer(&mcp.Implementation{Name: "sdkserver", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "daemon_status", Description: "status"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, status, error) {
			return nil, status{
				Version: "1.0.0", PID: os.Getpid(), Mode: "stdio",
				StartedAt:     started.UTC().Format(time.RFC3339),
				UptimeSeconds: time.Since(started).Seconds(),
				Requests:      calls.Add(1),
			}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
