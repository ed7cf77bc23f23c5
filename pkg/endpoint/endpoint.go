// Package endpoint says where hearth's daemon listens, so that the daemon and
// the shim find the same socket from the same environment (DESIGN.md §6). It
// is deliberately tiny: the shim links it and must stay small.
package endpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MaxSocketPath is sun_path's size on Linux minus the terminating NUL (macOS
// allows 104): a longer path would be silently truncated by bind/connect.
const MaxSocketPath = 107

// Getenv reads one variable (os.Getenv, or a map's lookup in tests).
type Getenv func(string) string

// SocketPath returns the daemon's socket path and whether it is hearth's own
// default location (whose directory hearth creates 0700 and checks is ours).
// MCP_SOCKET_PATH wins; else $XDG_RUNTIME_DIR/hearth/hearthd.sock; else
// $TMPDIR/hearth-<uid>/hearthd.sock.
func SocketPath(getenv Getenv) (path string, ours bool, err error) {
	if v := getenv("MCP_SOCKET_PATH"); v != "" {
		path = v
	} else if dir := getenv("XDG_RUNTIME_DIR"); dir != "" && filepath.IsAbs(dir) {
		path, ours = filepath.Join(dir, "hearth", "hearthd.sock"), true
	} else {
		path, ours = filepath.Join(os.TempDir(), fmt.Sprintf("hearth-%d", os.Getuid()), "hearthd.sock"), true
	}
	if strings.ContainsRune(path, 0) {
		return "", false, fmt.Errorf("socket path contains a NUL byte")
	}
	if !filepath.IsAbs(path) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", false, fmt.Errorf("socket path %q: %w", path, err)
		}
		path = abs
	}
	if len(path) > MaxSocketPath {
		return "", false, fmt.Errorf("socket path %s is %d bytes; Unix sockets allow at most %d: set MCP_SOCKET_PATH to a shorter path", path, len(path), MaxSocketPath)
	}
	return path, ours, nil
}

// StateDir is where hearth writes state that is not data: the autostarted
// daemon's log. $XDG_STATE_HOME/hearth, else ~/.local/state/hearth.
func StateDir(getenv Getenv) (string, error) {
	if v := getenv("XDG_STATE_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "hearth"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no XDG_STATE_HOME and no home directory: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".local", "state", "hearth"), nil
}
