package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hearth-mcp/hearth/pkg/endpoint"
)

// Mode is how the daemon talks to clients.
type Mode string

// The two endpoints (seed 001 §3).
const (
	ModeStdio  Mode = "stdio"
	ModeSocket Mode = "socket"
)

// Config is the daemon's configuration, read from the environment.
type Config struct {
	Mode Mode
	// SocketPath is where the socket is bound (socket mode).
	SocketPath string
	// SocketDirIsOurs: the path is hearth's default, so its directory is
	// created 0700 and checked to be ours. A user-chosen MCP_SOCKET_PATH's
	// directory is left as it is (it may be /tmp).
	SocketDirIsOurs bool
	// SocketMode is the socket file's permission (0600 unless MCP_SOCKET_MODE).
	SocketMode os.FileMode
	// ReadyFile is written when serving starts and removed on exit; empty: none.
	ReadyFile string
	// ReadyFileDefault: ReadyFile was not chosen by MCP_READY_FILE, so it
	// follows the socket (beside a socket systemd passes, too).
	ReadyFileDefault bool
	// DrainTimeout bounds how long shutdown waits for running calls.
	DrainTimeout time.Duration
	// QueueDepth bounds one connection's queued requests.
	QueueDepth int
	// LogLevel is the stderr log level (debug, info, warn, error).
	LogLevel string
	// IdleTimeout ends a socket daemon that has had no client for this long
	// (HEARTH_IDLE_TIMEOUT; the shim sets it for daemons it autostarts).
	// Zero: serve until stopped.
	IdleTimeout time.Duration
	// KillGrace is how long a cancelled or timed-out child's process group
	// has between SIGTERM and SIGKILL (HEARTH_KILL_GRACE, default 2s).
	KillGrace time.Duration
	// MaxChildren caps the child processes running at once across the
	// daemon (HEARTH_MAX_CHILDREN, default 8); more wait in a queue.
	MaxChildren int
}

// Getenv reads one variable; tests pass a map's lookup.
type Getenv func(string) string

// LoadConfig reads the configuration for mode from the environment.
func LoadConfig(mode Mode, getenv Getenv) (Config, error) {
	c := Config{Mode: mode, SocketMode: 0o600, DrainTimeout: 10 * time.Second, LogLevel: "info"}
	if v := getenv("HEARTH_LOG_LEVEL"); v != "" {
		switch v {
		case "debug", "info", "warn", "error":
			c.LogLevel = v
		default:
			return c, fmt.Errorf("HEARTH_LOG_LEVEL=%q: want debug, info, warn or error", v)
		}
	}
	if v := getenv("HEARTH_DRAIN_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("HEARTH_DRAIN_TIMEOUT=%q: want a positive duration such as 10s", v)
		}
		c.DrainTimeout = d
	}
	if v := getenv("HEARTH_IDLE_TIMEOUT"); v != "" && v != "0" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return c, fmt.Errorf("HEARTH_IDLE_TIMEOUT=%q: want a duration such as 10m, or 0 for never", v)
		}
		c.IdleTimeout = d
	}
	if v := getenv("HEARTH_QUEUE_DEPTH"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1<<20 {
			return c, fmt.Errorf("HEARTH_QUEUE_DEPTH=%q: want an integer from 1 to 1048576", v)
		}
		c.QueueDepth = n
	}
	if v := getenv("HEARTH_KILL_GRACE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > time.Minute {
			return c, fmt.Errorf("HEARTH_KILL_GRACE=%q: want a duration from 1ms to 1m such as 2s", v)
		}
		c.KillGrace = d
	}
	if v := getenv("HEARTH_MAX_CHILDREN"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1024 {
			return c, fmt.Errorf("HEARTH_MAX_CHILDREN=%q: want an integer from 1 to 1024", v)
		}
		c.MaxChildren = n
	}
	path, ours, err := endpoint.SocketPath(endpoint.Getenv(getenv))
	if err != nil {
		return c, err
	}
	c.SocketPath, c.SocketDirIsOurs = path, ours
	if v := getenv("MCP_SOCKET_MODE"); v != "" {
		m, err := strconv.ParseUint(v, 8, 32)
		if err != nil || m > 0o777 {
			return c, fmt.Errorf("MCP_SOCKET_MODE=%q: want an octal permission such as 0600", v)
		}
		c.SocketMode = os.FileMode(m)
	}
	switch v := getenv("MCP_READY_FILE"); {
	case v != "":
		c.ReadyFile = v
	case mode == ModeSocket:
		c.ReadyFile = filepath.Join(filepath.Dir(c.SocketPath), "hearthd.ready")
		c.ReadyFileDefault = true
	default:
		// A stdio daemon is one editor's private copy: writing the shared
		// readiness file would claim a socket daemon is up when none is.
	}
	return c, nil
}
