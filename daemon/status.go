package daemon

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/tool"
	"github.com/hearth-mcp/hearth/pkg/version"
)

// statusResult is daemon_status's result object.
type statusResult struct {
	Version        string             `json:"version"`
	ToolingVersion string             `json:"toolingVersion"`
	PID            int                `json:"pid"`
	Mode           Mode               `json:"mode"`
	StartedAt      string             `json:"started_at"`
	UptimeSeconds  float64            `json:"uptime_s"`
	Connections    statusConnections  `json:"connections"`
	Requests       uint64             `json:"requests"`
	Errors         uint64             `json:"errors"`
	Panics         uint64             `json:"panics"`
	Children       int                `json:"children"`
	Tools          []mcp.ToolCounters `json:"tools"`
}

type statusConnections struct {
	Current int64  `json:"current"`
	Total   uint64 `json:"total"`
}

func (d *Daemon) statusTool() tool.Tool {
	return tool.Tool{
		Name:  "daemon_status",
		Title: "hearth daemon status",
		Description: "Reports the hearth daemon's health: version, uptime, connections, request and error counts, " +
			"child processes running for tools, and per tool the calls, errors and p50/p99 latency in milliseconds since the daemon started.",
		InputSchema:   json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`),
		SchemaVersion: 2, // 2: the result gained "children"
		Annotations:   tool.Annotations{ReadOnly: true, Idempotent: true},
		Timeout:       5 * time.Second,
		Handler: func(ctx context.Context, call *tool.Call) (any, error) {
			c := d.srv.Counters()
			return statusResult{
				Version:        version.Version,
				ToolingVersion: version.Tooling(),
				PID:            os.Getpid(),
				Mode:           d.cfg.Mode,
				StartedAt:      d.started.UTC().Format(time.RFC3339),
				UptimeSeconds:  time.Since(d.started).Seconds(),
				Connections:    statusConnections{Current: c.Connections, Total: c.ConnectionsAll},
				Requests:       c.Requests,
				Errors:         c.Errors,
				Panics:         c.Panics,
				Children:       d.children.Live(),
				Tools:          d.srv.ToolCounters(),
			}, nil
		},
	}
}
