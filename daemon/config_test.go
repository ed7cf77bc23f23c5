package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func TestLoadConfig(t *testing.T) {
	uid := os.Getuid()
	long := "/" + strings.Repeat("d", 120) + "/s.sock"
	cases := []struct {
		name    string
		mode    Mode
		env     map[string]string
		check   func(Config) bool
		wantErr string
	}{
		{"xdg default", ModeSocket, map[string]string{"XDG_RUNTIME_DIR": "/run/user/1"}, func(c Config) bool {
			return c.SocketPath == "/run/user/1/hearth/hearthd.sock" && c.SocketDirIsOurs && c.SocketMode == 0o600 &&
				c.ReadyFile == "/run/user/1/hearth/hearthd.ready"
		}, ""},
		{"no xdg", ModeSocket, map[string]string{}, func(c Config) bool {
			return c.SocketPath == filepath.Join(os.TempDir(), fmt.Sprintf("hearth-%d", uid), "hearthd.sock") && c.SocketDirIsOurs
		}, ""},
		{"seed variables restore the seed's paths", ModeSocket, map[string]string{"MCP_SOCKET_PATH": "/tmp/mcp.sock", "MCP_READY_FILE": "/tmp/mcp.ready", "MCP_SOCKET_MODE": "0660"}, func(c Config) bool {
			return c.SocketPath == "/tmp/mcp.sock" && !c.SocketDirIsOurs && c.ReadyFile == "/tmp/mcp.ready" && c.SocketMode == 0o660
		}, ""},
		{"stdio writes no ready file unless asked", ModeStdio, map[string]string{}, func(c Config) bool { return c.ReadyFile == "" }, ""},
		{"stdio with MCP_READY_FILE", ModeStdio, map[string]string{"MCP_READY_FILE": "/x/r"}, func(c Config) bool { return c.ReadyFile == "/x/r" }, ""},
		{"drain and queue", ModeSocket, map[string]string{"HEARTH_DRAIN_TIMEOUT": "3s", "HEARTH_QUEUE_DEPTH": "8"}, func(c Config) bool {
			return c.DrainTimeout == 3*time.Second && c.QueueDepth == 8
		}, ""},
		{"relative socket path made absolute", ModeSocket, map[string]string{"MCP_SOCKET_PATH": "rel.sock"}, func(c Config) bool { return filepath.IsAbs(c.SocketPath) }, ""},
		{"socket path too long", ModeSocket, map[string]string{"MCP_SOCKET_PATH": long}, nil, "at most 107"},
		{"bad socket mode", ModeSocket, map[string]string{"MCP_SOCKET_MODE": "rw"}, nil, "MCP_SOCKET_MODE"},
		{"socket mode out of range", ModeSocket, map[string]string{"MCP_SOCKET_MODE": "7777"}, nil, "MCP_SOCKET_MODE"},
		{"bad log level", ModeSocket, map[string]string{"HEARTH_LOG_LEVEL": "loud"}, nil, "HEARTH_LOG_LEVEL"},
		{"bad drain", ModeSocket, map[string]string{"HEARTH_DRAIN_TIMEOUT": "-1s"}, nil, "HEARTH_DRAIN_TIMEOUT"},
		{"bad queue depth", ModeSocket, map[string]string{"HEARTH_QUEUE_DEPTH": "0"}, nil, "HEARTH_QUEUE_DEPTH"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := LoadConfig(c.mode, env(c.env))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("want error containing %q, got %v", c.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(cfg) {
				t.Fatalf("unexpected config %+v", cfg)
			}
		})
	}
}
