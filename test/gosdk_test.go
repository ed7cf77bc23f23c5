//go:build unix

package test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// exerciseSession runs the foundation's session through a real Go SDK client:
// initialize, ping, tools/list, daemon_status, and a rejected argument.
func exerciseSession(t *testing.T, transport mcp.Transport, wantMode string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "hearth-e2e-go", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	init := cs.InitializeResult()
	//lint:ignore SA1019 hearth advertises logging (logging/setLevel on 2025-era sessions) in both eras: this checks that it does
	if init.ServerInfo.Name != "hearth" || init.Capabilities.Tools == nil || init.Capabilities.Logging == nil {
		t.Fatalf("initialize result: %+v", init)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	var names []string
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tl.Name)
		if tl.Meta["dev.hearth/schemaVersion"] == nil || tl.Annotations == nil || tl.InputSchema == nil {
			t.Fatalf("tool %s lacks contract fields: %+v", tl.Name, tl)
		}
	}
	found := false
	for _, n := range names {
		found = found || n == "daemon_status"
	}
	if !found {
		t.Fatalf("daemon_status not listed: %v", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "daemon_status", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("daemon_status: %v", err)
	}
	st, ok := res.StructuredContent.(map[string]any)
	if res.IsError || !ok || st["mode"] != wantMode || st["version"] == nil || st["tools"] == nil {
		t.Fatalf("daemon_status result: %+v", res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "daemon_status", Arguments: map[string]any{"verbose": true}})
	if err != nil {
		t.Fatalf("bad call transport error: %v", err)
	}
	if !res.IsError {
		t.Fatalf("an unknown argument was accepted: %+v", res)
	}
	if st := toolError(t, res); st["code"] != "INVALID_REQUEST" {
		t.Fatalf("unknown argument: %+v", st)
	}
}

func TestGoSDKOverStdio(t *testing.T) {
	cmd := exec.Command(bin.hearthd, "stdio")
	cmd.Env = append(cmd.Environ(), "HEARTH_HOME="+t.TempDir())
	exerciseSession(t, &mcp.CommandTransport{Command: cmd}, "stdio")
}

func TestGoSDKOverSocket(t *testing.T) {
	d := startDaemon(t)
	conn, err := net.Dial("unix", d.socket)
	if err != nil {
		t.Fatal(err)
	}
	exerciseSession(t, &mcp.IOTransport{Reader: conn, Writer: conn}, "socket")
	d.stop(t)
}

// shimEnv is the environment of a shim (and the daemon it autostarts) in a
// statusJSON is `hearthd status --json` run with env (the daemon it finds
// is the one env leads to); a failed run fails the test.
func statusJSON(t *testing.T, env []string) []byte {
	t.Helper()
	cmd := exec.Command(bin.hearthd, "status", "--json")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hearthd status --json: %v\n%s", err, out)
	}
	return out
}

// private runtime and state directory.
func shimEnv(t *testing.T, extra ...string) (env []string, runtime, state string) {
	t.Helper()
	runtime = shortTempDir(t)
	state = t.TempDir()
	// HOME is state: the config file (state/.config/hearth/config.toml) and
	// the autostart log (state/.local/state/hearth) are the test's own.
	env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "HOME="+state, "HEARTH_HOME="+filepath.Join(state, "home"),
		"MCP_SOCKET_PATH=", "MCP_READY_FILE=", "HEARTH_NO_AUTOSTART=", "HEARTH_DAEMON=", "HEARTH_IDLE_TIMEOUT=")
	env = append(env, extra...)
	t.Cleanup(func() { killDaemonsIn(runtime) })
	return env, runtime, state
}

func TestGoSDKThroughShim(t *testing.T) {
	env, _, _ := shimEnv(t)
	cmd := exec.Command(bin.hearth)
	cmd.Env = env
	exerciseSession(t, &mcp.CommandTransport{Command: cmd}, "socket")
}
