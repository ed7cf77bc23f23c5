package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hearth-mcp/hearth/pkg/config"
	"github.com/hearth-mcp/hearth/pkg/config/keys"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
)

// Mode is how the daemon talks to clients.
type Mode string

// The two endpoints.
const (
	ModeStdio  Mode = "stdio"
	ModeSocket Mode = "socket"
)

// DefaultMaxCalls is how many tool calls one connection may run at once
// unless max_calls (HEARTH_MAX_CALLS) says otherwise.
const DefaultMaxCalls = keys.DefaultMaxCalls

// Config is the daemon's configuration, read through a getenv: in hearthd
// the settings of the config file and the daemon's own environment
// (pkg/config), in tests a map's lookup.
type Config struct {
	Mode Mode
	// SocketPath is where the socket is bound (socket mode).
	SocketPath string
	// SocketDirIsOurs: the path is hearth's default, so its directory is
	// created 0700 and checked to be ours. A user-chosen MCP_SOCKET_PATH's
	// directory is left as it is (it may be /tmp).
	SocketDirIsOurs bool
	// SocketMode is the socket file's permission (0600 unless socket_mode).
	SocketMode os.FileMode
	// ReadyFile is written when serving starts and removed on exit; empty: none.
	ReadyFile string
	// ReadyFileDefault: ReadyFile was not chosen by MCP_READY_FILE, so it
	// follows the socket (beside a socket systemd passes, too).
	ReadyFileDefault bool
	// DrainTimeout bounds how long shutdown waits for running calls.
	DrainTimeout time.Duration
	// QueueDepth bounds one connection's queued requests (0: pkg/mcp's default).
	QueueDepth int
	// MaxCalls bounds the tool calls one connection runs at once
	// (max_calls, HEARTH_MAX_CALLS; DefaultMaxCalls).
	MaxCalls int
	// MaxConnections caps the connections served at once (max_connections,
	// HEARTH_MAX_CONNECTIONS, default 512); one more is told so and closed.
	MaxConnections int
	// MaxHeldMB bounds, in MiB, what every connection's pending requests and
	// partly read lines hold together (max_held_mb, HEARTH_MAX_HELD_MB,
	// default 512; mcp.Options.MaxHeldBytes).
	MaxHeldMB int
	// LogLevel is the stderr log level (debug, info, warn, error).
	LogLevel string
	// IdleTimeout ends a socket daemon that has had no client for this long
	// (idle_timeout, HEARTH_IDLE_TIMEOUT; AutostartIdleTimeout for a daemon
	// the shim started). Zero: serve until stopped.
	IdleTimeout time.Duration
	// KillGrace is how long a cancelled or timed-out child's process group
	// has between SIGTERM and SIGKILL (kill_grace, HEARTH_KILL_GRACE, default 2s).
	KillGrace time.Duration
	// MaxChildren caps the child processes running at once across the
	// daemon (max_children, HEARTH_MAX_CHILDREN, default 8); more wait in a queue.
	MaxChildren int
	// StateDir is where hearth writes state that is not data
	// (endpoint.StateDir): hosted servers' logs go under servers/ there.
	// Empty: they keep no log file.
	StateDir string
	// HTTPListen is the loopback address Streamable HTTP is served on
	// (http_listen, HEARTH_HTTP_LISTEN); empty: not served.
	HTTPListen string
	// HTTPAuthNone turns the bearer token off (http_auth = "none").
	HTTPAuthNone bool
	// HostedControl offers models the hosted_servers tool, which restarts
	// or stops hosted servers for every window (hosted_control,
	// HEARTH_HOSTED_CONTROL). Off by default: control stays with the user,
	// whose `hearthd servers` reaches the daemon by $/hearth/servers on the
	// socket (docs/protocol.md).
	HostedControl bool
	// UpgradeHandOver: a newer hearthd installed in place of this one's
	// executable becomes its successor (upgrade_handover,
	// HEARTH_UPGRADE_HANDOVER, default true; upgrade.go).
	UpgradeHandOver bool
	// TokenFile is where the bearer token is kept (0600), beside the config
	// file.
	TokenFile string
	// Settings, when set, are the settings being served: SIGHUP (Reload)
	// re-reads them and daemon_status lists them. LoadConfig leaves it nil;
	// hearthd sets it.
	Settings *config.Live
}

// Defaults of the daemon-wide bounds (see Config).
const (
	DefaultMaxConnections = keys.DefaultMaxConnections
	DefaultMaxHeldMB      = keys.DefaultMaxHeldMB
)

// AutostartIdleTimeout is the idle timeout of a daemon the shim started,
// when no idle_timeout is configured.
const AutostartIdleTimeout = 10 * time.Minute

// Getenv reads one variable; tests pass a map's lookup.
type Getenv func(string) string

// LoadConfig reads the configuration for mode through getenv. Every
// setting's bounds are pkg/config's, and an error names the variable.
func LoadConfig(mode Mode, getenv Getenv) (Config, error) {
	c := Config{Mode: mode, SocketMode: keys.DefaultSocketMode, DrainTimeout: keys.DefaultDrainTimeout, LogLevel: keys.DefaultLogLevel, MaxCalls: DefaultMaxCalls,
		MaxConnections: DefaultMaxConnections, MaxHeldMB: DefaultMaxHeldMB}
	if v := getenv("HEARTH_LOG_LEVEL"); v != "" {
		if err := config.Check("HEARTH_LOG_LEVEL", v); err != nil {
			return c, err
		}
		c.LogLevel = v
	}
	durations := []struct {
		name string
		to   *time.Duration
	}{{"HEARTH_DRAIN_TIMEOUT", &c.DrainTimeout}, {"HEARTH_IDLE_TIMEOUT", &c.IdleTimeout}, {"HEARTH_KILL_GRACE", &c.KillGrace}}
	idleSet := false
	for _, d := range durations {
		v, ok, err := config.Duration(getenv, d.name)
		if err != nil {
			return c, err
		}
		if ok {
			*d.to = v
			idleSet = idleSet || d.name == "HEARTH_IDLE_TIMEOUT"
		}
	}
	// A daemon the shim started (HEARTH_AUTOSTARTED, set by the shim alone)
	// exits after AutostartIdleTimeout without clients, unless idle_timeout
	// says otherwise: it must not outlive the editors that started it.
	if !idleSet && mode == ModeSocket && getenv("HEARTH_AUTOSTARTED") != "" {
		c.IdleTimeout = AutostartIdleTimeout
	}
	ints := []struct {
		name string
		to   *int
	}{{"HEARTH_QUEUE_DEPTH", &c.QueueDepth}, {"HEARTH_MAX_CALLS", &c.MaxCalls}, {"HEARTH_MAX_CHILDREN", &c.MaxChildren},
		{"HEARTH_MAX_CONNECTIONS", &c.MaxConnections}, {"HEARTH_MAX_HELD_MB", &c.MaxHeldMB}}
	for _, n := range ints {
		v, ok, err := config.Int(getenv, n.name)
		if err != nil {
			return c, err
		}
		if ok {
			*n.to = v
		}
	}
	if dir, err := endpoint.StateDir(endpoint.Getenv(getenv)); err == nil {
		c.StateDir = dir
	}
	path, ours, err := endpoint.SocketPath(endpoint.Getenv(getenv))
	if err != nil {
		return c, err
	}
	c.SocketPath, c.SocketDirIsOurs = path, ours
	if v := getenv("MCP_SOCKET_MODE"); v != "" {
		if err := config.Check("MCP_SOCKET_MODE", v); err != nil {
			return c, err
		}
		m, _ := strconv.ParseUint(v, 8, 32)
		c.SocketMode = os.FileMode(m)
	}
	hc, _, err := config.Bool(getenv, "HEARTH_HOSTED_CONTROL")
	if err != nil {
		return c, err
	}
	c.HostedControl = hc
	uh, set, err := config.Bool(getenv, "HEARTH_UPGRADE_HANDOVER")
	if err != nil {
		return c, err
	}
	c.UpgradeHandOver = uh || !set
	if err := loadHTTP(&c, getenv); err != nil {
		return c, err
	}
	switch v := getenv("MCP_READY_FILE"); {
	case v != "":
		c.ReadyFile = v
	case mode == ModeSocket:
		c.ReadyFile = filepath.Join(filepath.Dir(c.SocketPath), endpoint.ReadyName(c.SocketPath))
		c.ReadyFileDefault = true
	default:
		// A stdio daemon is one editor's private copy: writing the shared
		// readiness file would claim a socket daemon is up when none is.
	}
	return c, nil
}

// loadHTTP reads the Streamable HTTP settings: a loopback address, and
// whether the bearer token is required ("token", the default) or not
// ("none", said explicitly).
//
// Both are checked by pkg/config where the value is read, so an error names
// where it came from: the key and the file for a value of the config file
// (its Load refused it before this runs), the variable for one of the
// environment (config.Check, here).
func loadHTTP(c *Config, getenv Getenv) error {
	auth := getenv("HEARTH_HTTP_AUTH")
	if err := config.Check("HEARTH_HTTP_AUTH", auth); err != nil {
		return err
	}
	c.HTTPAuthNone = auth == "none"
	v := getenv("HEARTH_HTTP_LISTEN")
	if v == "" {
		return nil
	}
	if err := config.Check("HEARTH_HTTP_LISTEN", v); err != nil {
		return err
	}
	c.HTTPListen = v
	path, _, err := config.Path(func(k string) string { return getenv(k) })
	if err != nil {
		return err
	}
	if path == "" {
		return fmt.Errorf("HEARTH_HTTP_LISTEN is set but there is no configuration directory for the HTTP token: set HOME or XDG_CONFIG_HOME")
	}
	c.TokenFile = filepath.Join(filepath.Dir(path), "http-token")
	return nil
}
