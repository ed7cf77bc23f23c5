// Command sdkserver is the peer for hearth's benchmarks: a stdio MCP server
// built with the official go-sdk that serves the same trivial tool as hearth
// (daemon_status, returning a status object of the same shape) and a small
// real one (diff_assets: the RFC 6902 patch between two documents, with
// wI2L/jsondiff), so the two can be measured side by side in one run.
package main

import (
	"context"
	"log"
	"os"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wI2L/jsondiff"
)

type status struct {
	Version       string  `json:"version"`
	PID           int     `json:"pid"`
	Mode          string  `json:"mode"`
	StartedAt     string  `json:"started_at"`
	UptimeSeconds float64 `json:"uptime_s"`
	Requests      uint64  `json:"requests"`
}

type diffArgs struct {
	Base any `json:"base"`
	New  any `json:"new"`
}

type diffResult struct {
	OK    bool           `json:"ok"`
	Patch jsondiff.Patch `json:"patch"`
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
	mcp.AddTool(s, &mcp.Tool{Name: "diff_assets", Description: "RFC 6902 patch from base to new"},
		func(ctx context.Context, req *mcp.CallToolRequest, in diffArgs) (*mcp.CallToolResult, diffResult, error) {
			patch, err := jsondiff.Compare(in.Base, in.New)
			if err != nil {
				return nil, diffResult{}, err
			}
			return nil, diffResult{OK: true, Patch: patch}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
