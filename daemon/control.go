package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// Restarting and stopping hosted servers is the user's: `hearthd servers`
// sends $/hearth/servers over the socket, a control method no MCP client's
// connection reaches (mcp.Options.Control). Models get the hosted_servers
// tool only when the config says hosted_control = true; otherwise they see
// the servers read-only in daemon_status.

// ServersMethod is the control request of `hearthd servers restart|stop
// NAME`: params {"action":"restart"|"stop","name":NAME}, result
// {"action","name","instances"} (docs/protocol.md).
const ServersMethod = "$/hearth/servers"

type hostedControlArgs struct {
	Action string `json:"action"`
	Name   string `json:"name"`
}

type hostedControlResult struct {
	Action    string `json:"action"`
	Name      string `json:"name"`
	Instances int    `json:"instances"`
}

// controls are the daemon's control methods (mcp.Options.Control).
func (d *Daemon) controls() map[string]mcp.ControlFunc {
	return map[string]mcp.ControlFunc{ServersMethod: d.serversControl}
}

// serversControl answers $/hearth/servers.
func (d *Daemon) serversControl(_ context.Context, params json.RawMessage) (any, error) {
	var a hostedControlArgs
	if err := json.Unmarshal(params, &a); err != nil || a.Name == "" || (a.Action != "restart" && a.Action != "stop") {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: ServersMethod + ` takes {"action":"restart"|"stop","name":NAME}`}
	}
	n := d.controlServers(a)
	if n == 0 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: noSuchServer(a.Name)}
	}
	return hostedControlResult{Action: a.Action, Name: a.Name, Instances: n}, nil
}

// controlServers restarts or stops the instances named a.Name; it returns
// how many.
func (d *Daemon) controlServers(a hostedControlArgs) int {
	switch a.Action {
	case "restart":
		return d.hosted.Restart(a.Name)
	case "stop":
		return d.hosted.Stop(a.Name)
	}
	return 0
}

func noSuchServer(name string) string {
	return fmt.Sprintf("no hosted server named %q runs (hearthd status lists them)", name)
}

// hostedControlTool restarts or stops hosted servers for a model, when the
// config turns it on (hosted_control).
func (d *Daemon) hostedControlTool() tool.Tool {
	return tool.For(tool.Tool{
		Name:  "hosted_servers",
		Title: "restart or stop hosted MCP servers",
		Description: "Restarts or stops the hosted MCP servers (hearth run) named by name: a [servers.NAME] of the config file, a command's base name, or an instance key. " +
			"restart stops the server's process (its calls in flight get an error) and clears a failure; the next request starts it again. " +
			"stop stops it for good: its clients get an error for every request until they reconnect. The result says how many instances it applied to.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["action","name"],"properties":{` +
			`"action":{"type":"string","title":"Action","enum":["restart","stop"],"description":"restart or stop"},` +
			`"name":{"type":"string","title":"Server","minLength":1,"description":"the server's config name, its command's base name, or an instance key (hearthd status)"}}}`),
		SchemaVersion: 2, // 2: outputSchema
		Annotations:   tool.Annotations{Destructive: true},
		Timeout:       30 * time.Second,
	}, func(ctx context.Context, call *tool.Call, a hostedControlArgs) (hostedControlResult, error) {
		n := d.controlServers(a)
		if n == 0 {
			return hostedControlResult{}, tool.Errorf(tool.NotFound, "%s", noSuchServer(a.Name))
		}
		return hostedControlResult{Action: a.Action, Name: a.Name, Instances: n}, nil
	})
}
