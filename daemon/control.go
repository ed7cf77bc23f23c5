package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/hosted"
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
// {"action","name","instances"}; NAME is a server's name or a key prefix
// (hosted.Table.Restart); one that names nothing, or several servers, is
// refused with the instances listed in the message and in the error's
// data.matches (docs/protocol.md).
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

// ReloadMethod is the control request of `hearthd reload`: the daemon
// reloads as on SIGHUP (Daemon.Reload); the result is {"reloaded":true},
// or an error whose message says what did not apply (the config file's
// line), which daemon_status lists until a later reload succeeds.
const ReloadMethod = "$/hearth/reload"

// StopMethod is the control request of `hearthd stop`: params {}; result
// {"pid"}, this daemon's pid. Once the answer is written the daemon stops
// as on SIGTERM: it stops accepting, answers or drains what is in flight,
// removes its socket and readiness file, and exits. A request on the
// connection the command has already checked (localsock.Dial reads the
// server's user), not a signal to a pid, so it works where there are no
// signals (Windows: docs/decisions/0064-windows-named-pipe.md) and stops
// only the daemon that answered.
const StopMethod = "$/hearth/stop"

// errStopAsked is the cause of Run's context when $/hearth/stop ended it.
var errStopAsked = errors.New("hearthd stop")

// stopState is the stop request's hold on Run's context.
type stopState struct {
	mu     sync.Mutex
	cancel context.CancelCauseFunc
}

// arm gives Run the context a stop request ends, as a signal ends ctx.
func (s *stopState) arm(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	s.cancel = cancel
	s.mu.Unlock()
	return ctx, func() { cancel(nil) }
}

// stop ends the armed context (nothing before Run).
func (s *stopState) stop() {
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel(errStopAsked)
	}
}

// stopReason names what ended Run's context: a stop request or a signal.
func stopReason(ctx context.Context) string {
	if errors.Is(context.Cause(ctx), errStopAsked) {
		return "hearthd stop"
	}
	return "signal"
}

// stopControl answers $/hearth/stop.
func (d *Daemon) stopControl(_ context.Context, params json.RawMessage) (any, error) {
	var a struct{}
	if len(params) > 0 && string(params) != "null" && json.Unmarshal(params, &a) != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: StopMethod + " takes {}"}
	}
	d.log.Info("asked to stop", zap.String("by", StopMethod))
	// Stopping once the answer is out: stopping first could close this
	// connection before `hearthd stop` reads which pid to wait for.
	return mcp.ThenReply{Result: map[string]int{"pid": os.Getpid()}, After: d.stopper.stop}, nil
}

// controls are the daemon's control methods (mcp.Options.Control).
func (d *Daemon) controls() map[string]mcp.ControlFunc {
	return map[string]mcp.ControlFunc{ServersMethod: d.serversControl, HandOverMethod: d.handOverControl, ReloadMethod: d.reloadControl, UIMethod: d.uiControl, LoginMethod: d.loginControl, StopMethod: d.stopControl}
}

// reloadControl answers $/hearth/reload.
func (d *Daemon) reloadControl(context.Context, json.RawMessage) (any, error) {
	if err := d.Reload(); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return map[string]bool{"reloaded": true}, nil
}

// serversControl answers $/hearth/servers.
func (d *Daemon) serversControl(_ context.Context, params json.RawMessage) (any, error) {
	var a hostedControlArgs
	if err := json.Unmarshal(params, &a); err != nil || a.Name == "" || (a.Action != "restart" && a.Action != "stop" && a.Action != "forget") {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: ServersMethod + ` takes {"action":"restart"|"stop"|"forget","name":NAME}`}
	}
	n, err := d.controlServers(a)
	if err != nil {
		e := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		var fe *hosted.FindError
		if errors.As(err, &fe) {
			e.Data = map[string]any{"ambiguous": fe.Ambiguous, "matches": fe.Matches}
		}
		return nil, e
	}
	return hostedControlResult{Action: a.Action, Name: a.Name, Instances: n}, nil
}

// controlServers restarts or stops the instances a.Name names; it returns
// how many, or a *hosted.FindError.
func (d *Daemon) controlServers(a hostedControlArgs) (int, error) {
	switch a.Action {
	case "restart":
		return d.hosted.Restart(a.Name)
	case "stop":
		return d.hosted.Stop(a.Name)
	case "forget":
		// The catalog entry only (docs/decisions/0045-hosted-catalog.md):
		// the user's, never a model's (hosted_servers offers restart and
		// stop).
		return d.hosted.Forget(a.Name)
	}
	return 0, fmt.Errorf("no action %q", a.Action)
}

// hostedControlTool restarts or stops hosted servers for a model, when the
// config turns it on (hosted_control).
func (d *Daemon) hostedControlTool() tool.Tool {
	return tool.For(tool.Tool{
		Name:  "hosted_servers",
		Title: "restart or stop hosted MCP servers",
		Description: "Restarts or stops the hosted MCP servers (hearth run) named by name: a [servers.NAME] of the config file, the name of what an inline command runs (its npm or PyPI package, image or script, as daemon_status shows it), or a prefix of an instance key. " +
			"A name of instances of different servers, or a prefix of several keys, is refused with the matches listed. " +
			"restart stops the server's process (its calls in flight get an error) and clears a failure; the next request starts it again. " +
			"stop stops it for good: its clients get an error for every request until they reconnect. The result says how many instances it applied to.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["action","name"],"properties":{` +
			`"action":{"type":"string","title":"Action","enum":["restart","stop"],"description":"restart or stop"},` +
			`"name":{"type":"string","title":"Server","minLength":1,"description":"the server's name, or a prefix (4 hex digits or more) of an instance key (daemon_status lists both)"}}}`),
		SchemaVersion: 3, // 2: outputSchema; 3: names are what a server runs, or key prefixes
		Annotations:   tool.Annotations{Destructive: true},
		Timeout:       30 * time.Second,
	}, func(ctx context.Context, call *tool.Call, a hostedControlArgs) (hostedControlResult, error) {
		n, err := d.controlServers(a)
		var fe *hosted.FindError
		switch {
		case errors.As(err, &fe) && fe.Ambiguous:
			return hostedControlResult{}, tool.Errorf(tool.InvalidRequest, "%s", err)
		case err != nil:
			return hostedControlResult{}, tool.Errorf(tool.NotFound, "%s", err)
		}
		return hostedControlResult{Action: a.Action, Name: a.Name, Instances: n}, nil
	})
}
