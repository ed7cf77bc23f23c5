package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/hearth-mcp/hearth/pkg/config"
	"github.com/hearth-mcp/hearth/pkg/config/keys"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/schemas"
	"github.com/hearth-mcp/hearth/pkg/schemas/backend"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
	"github.com/hearth-mcp/hearth/pkg/tool"
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
			want := filepath.Join(os.TempDir(), fmt.Sprintf("hearth-%d", uid), "hearthd.sock")
			if dir := endpoint.RuntimeDir(func(string) string { return "" }); dir != "" { // /run/user/<uid>
				want = filepath.Join(dir, "hearth", "hearthd.sock")
			}
			return c.SocketPath == want && c.SocketDirIsOurs
		}, ""},
		{"autostarted: idle after 10m", ModeSocket, map[string]string{"HEARTH_AUTOSTARTED": "1"}, func(c Config) bool {
			return c.IdleTimeout == AutostartIdleTimeout && AutostartIdleTimeout == 10*time.Minute
		}, ""},
		{"autostarted with idle_timeout set", ModeSocket, map[string]string{"HEARTH_AUTOSTARTED": "1", "HEARTH_IDLE_TIMEOUT": "1h"}, func(c Config) bool {
			return c.IdleTimeout == time.Hour
		}, ""},
		{"not autostarted: no idle timeout", ModeSocket, map[string]string{}, func(c Config) bool { return c.IdleTimeout == 0 }, ""},
		{"the /tmp paths can be restored", ModeSocket, map[string]string{"MCP_SOCKET_PATH": "/tmp/mcp.sock", "MCP_READY_FILE": "/tmp/mcp.ready", "MCP_SOCKET_MODE": "0660"}, func(c Config) bool {
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
		{"max calls default", ModeSocket, map[string]string{}, func(c Config) bool { return c.MaxCalls == DefaultMaxCalls && DefaultMaxCalls == 16 }, ""},
		{"max calls", ModeSocket, map[string]string{"HEARTH_MAX_CALLS": "1024"}, func(c Config) bool { return c.MaxCalls == 1024 }, ""},
		{"max calls zero", ModeSocket, map[string]string{"HEARTH_MAX_CALLS": "0"}, nil, `HEARTH_MAX_CALLS="0": want an integer from 1 to 1024`},
		{"max calls too many", ModeSocket, map[string]string{"HEARTH_MAX_CALLS": "1025"}, nil, "HEARTH_MAX_CALLS"},
		{"idle 0 is never", ModeSocket, map[string]string{"HEARTH_IDLE_TIMEOUT": "0"}, func(c Config) bool { return c.IdleTimeout == 0 }, ""},
		{"idle", ModeSocket, map[string]string{"HEARTH_IDLE_TIMEOUT": "10m"}, func(c Config) bool { return c.IdleTimeout == 10*time.Minute }, ""},
		{"bad idle", ModeSocket, map[string]string{"HEARTH_IDLE_TIMEOUT": "-1m"}, nil, "HEARTH_IDLE_TIMEOUT"},
		{"kill grace and children", ModeSocket, map[string]string{"HEARTH_KILL_GRACE": "500ms", "HEARTH_MAX_CHILDREN": "3"}, func(c Config) bool {
			return c.KillGrace == 500*time.Millisecond && c.MaxChildren == 3
		}, ""},
		{"kill grace too long", ModeSocket, map[string]string{"HEARTH_KILL_GRACE": "2m"}, nil, "HEARTH_KILL_GRACE"},
		{"max children zero", ModeSocket, map[string]string{"HEARTH_MAX_CHILDREN": "0"}, nil, "HEARTH_MAX_CHILDREN"},
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

// TestSettingDefaultsAgree: the defaults pkg/config reports (daemon_status,
// docs/reference.md) are the ones the code applies.
func TestSettingDefaultsAgree(t *testing.T) {
	s, err := config.Load(env(map[string]string{"HOME": t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(ModeSocket, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"max_batch":           strconv.Itoa(schemas.DefaultMaxBatch),
		"backend_assets_path": backend.DefaultAssetsPath,
		"queue_depth":         strconv.Itoa(mcp.DefaultQueueDepth),
		"max_calls":           strconv.Itoa(c.MaxCalls),
		"max_children":        strconv.Itoa(supervisor.DefaultMaxChildren),
		"kill_grace":          supervisor.DefaultGrace.String(),
		"drain_timeout":       c.DrainTimeout.String(),
		"log_level":           c.LogLevel,
		"socket_mode":         fmt.Sprintf("%04o", c.SocketMode),
		"idle_timeout":        "",
		"llm_timeout":         "20s",
		"upgrade_handover":    strconv.FormatBool(c.UpgradeHandOver),
	}
	for _, st := range s.Sources() {
		if w, ok := want[st.Key]; ok && st.Value != w {
			t.Errorf("%s: pkg/config says %q, the code uses %q", st.Key, st.Value, w)
		}
	}
}

// upgrade_handover turns the upgrade trigger off; any other value than a
// boolean is refused.
func TestUpgradeHandOverSetting(t *testing.T) {
	for v, want := range map[string]bool{"": true, "true": true, "false": false} {
		c, err := LoadConfig(ModeSocket, env(map[string]string{"HEARTH_UPGRADE_HANDOVER": v}))
		if err != nil || c.UpgradeHandOver != want {
			t.Errorf("HEARTH_UPGRADE_HANDOVER=%q: %v %v, want %v", v, c.UpgradeHandOver, err, want)
		}
	}
	if _, err := LoadConfig(ModeSocket, env(map[string]string{"HEARTH_UPGRADE_HANDOVER": "yes"})); err == nil {
		t.Error("HEARTH_UPGRADE_HANDOVER=yes was taken")
	}
}

// reloadDaemon is a daemon with the schema family, serving settings from a
// config file at path.
func reloadDaemon(t *testing.T, path string, vars map[string]string) (*Daemon, *observer.ObservedLogs) {
	t.Helper()
	vars[keys.ConfigVar] = path
	s, err := config.Load(env(vars))
	if err != nil {
		t.Fatal(err)
	}
	live := config.NewLive(s)
	core, logs := observer.New(zap.InfoLevel)
	log := zap.New(core)
	d, err := New(Options{Config: Config{Mode: ModeStdio, Settings: live}, Log: log, Env: tool.Env{Getenv: live.Getenv, Log: log}, Openers: []tool.Opener{schemas.Open}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.closeFamilies)
	return d, logs
}

func callTool(t *testing.T, d *Daemon, name string) map[string]any {
	t.Helper()
	e, ok := d.Registry().Lookup(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	v, err := e.Handler(context.Background(), tool.NewCall(name, json.RawMessage(`{}`), nil, tool.Client{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

func schemaCount(t *testing.T, d *Daemon) int {
	return len(callTool(t, d, "list_schemas")["schemas"].([]any))
}

// TestSIGHUPSettings: a bad config file at SIGHUP is logged naming the key
// and changes nothing; a good one is applied (the schema family reloads
// from the new root), and a setting only a restart applies is logged so and
// keeps its running value.
func TestSIGHUPSettings(t *testing.T) {
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	os.MkdirAll(one, 0o755)
	os.MkdirAll(two, 0o755)
	os.WriteFile(filepath.Join(one, "a.schema.json"), []byte(`{"type":"object"}`), 0o644)
	os.WriteFile(filepath.Join(two, "a.schema.json"), []byte(`{"type":"object"}`), 0o644)
	os.WriteFile(filepath.Join(two, "b.schema.json"), []byte(`{"type":"string"}`), 0o644)
	path := filepath.Join(dir, "config.toml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("schemas_dir = \"one\"\nmax_calls = 8\nllm_api_key = \"sk-secret-1\"\n")
	d, logs := reloadDaemon(t, path, map[string]string{})
	if n := schemaCount(t, d); n != 1 {
		t.Fatalf("%d schemas from the file's root", n)
	}
	before := d.Settings()

	write("schemas_dir = \"two\"\nmax_calls = \"lots\"\n")
	d.Reload()
	if d.Settings() != before {
		t.Fatal("a bad file replaced the settings")
	}
	if n := schemaCount(t, d); n != 1 {
		t.Fatalf("a bad file changed the catalog: %d schemas", n)
	}
	bad := logs.FilterMessage("config reload failed; the previous settings keep serving").All()
	if len(bad) != 1 || !strings.Contains(fmt.Sprint(bad[0].ContextMap()["error"]), "max_calls: want an integer, got a string") ||
		!strings.Contains(fmt.Sprint(bad[0].ContextMap()["error"]), path) {
		t.Fatalf("the failed reload's log: %v", bad)
	}

	write("schemas_dir = \"two\"\nmax_calls = 12\nllm_api_key = \"sk-secret-2\"\n")
	d.Reload()
	if n := schemaCount(t, d); n != 2 {
		t.Fatalf("the new root is not served: %d schemas", n)
	}
	if got := d.Settings().Getenv("HEARTH_MAX_CALLS"); got != "8" {
		t.Errorf("max_calls changed under a running daemon: %q", got)
	}
	if len(logs.FilterMessage("max_calls changed; takes effect after a restart").All()) != 1 ||
		len(logs.FilterMessage("llm_api_key changed; takes effect after a restart").All()) != 1 ||
		len(logs.FilterMessage("schemas_dir changed").All()) != 1 {
		t.Errorf("change logs: %v", logs.All())
	}
	for _, e := range logs.All() {
		if strings.Contains(fmt.Sprint(e.Message, e.ContextMap()), "sk-secret") {
			t.Errorf("a log shows the key: %s %v", e.Message, e.ContextMap())
		}
	}

	// daemon_status lists the settings, the key redacted, the pending change shown.
	st := callTool(t, d, "daemon_status")
	b, _ := json.Marshal(st["settings"])
	if strings.Contains(string(b), "sk-secret") {
		t.Fatalf("daemon_status shows the key: %s", b)
	}
	var settings struct {
		File     string
		FileRead bool `json:"file_read"`
		Keys     []config.Setting
	}
	json.Unmarshal(b, &settings)
	if settings.File != path || !settings.FileRead || len(settings.Keys) != len(keys.Settings) {
		t.Fatalf("settings: %s", b)
	}
	for _, k := range settings.Keys {
		switch k.Key {
		case "max_calls":
			if k.Value != "8" || k.Pending == nil || k.Pending.Value != "12" || !k.Restart {
				t.Errorf("max_calls: %+v", k)
			}
		case "schemas_dir":
			if k.Value != two || k.Source != "file "+path {
				t.Errorf("schemas_dir: %+v", k)
			}
		case "llm_api_key":
			if k.Value != "(redacted)" {
				t.Errorf("llm_api_key: %+v", k)
			}
		}
	}
}

// TestEnvironmentOverridesFile: the daemon's own environment wins over the
// file, and a reload keeps it so.
func TestEnvironmentOverridesFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	os.WriteFile(path, []byte("schemas_dir = \""+filepath.Join(dir, "nope")+"\"\n"), 0o600)
	d, _ := reloadDaemon(t, path, map[string]string{"SYN_SCHEMAS_DIR": dir})
	d.Reload()
	if got := d.Settings().Getenv("SYN_SCHEMAS_DIR"); got != dir {
		t.Fatalf("SYN_SCHEMAS_DIR = %q", got)
	}
}
