// Package endpoint says where hearth's daemon listens and where its data
// lives, so that the daemon, the shim and `hearthd stdio` find the same
// places from the same environment (docs/decisions/0015-one-owner-per-home.md).
// It is deliberately tiny: the shim links it and must stay small.
package endpoint

import (
	"crypto/sha256"
	"encoding/hex"
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
// MCP_SOCKET_PATH wins; else SocketName of the data directory in
// $XDG_RUNTIME_DIR/hearth; else in the user's runtime directory
// /run/user/<uid>/hearth when it exists and is theirs (a client that passes
// its server a minimal environment drops XDG_RUNTIME_DIR, but the directory
// is still there); else in $TMPDIR/hearth-<uid>.
func SocketPath(getenv Getenv) (path string, ours bool, err error) {
	if v := getenv("MCP_SOCKET_PATH"); v != "" {
		path = v
	} else {
		home, err := Home(getenv)
		if err != nil {
			return "", false, err
		}
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("hearth-%d", os.Getuid()))
		if rd := RuntimeDir(getenv); rd != "" {
			dir = filepath.Join(rd, "hearth")
		}
		path, ours = filepath.Join(dir, SocketName(home, userHome())), true
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

// SocketName is the default socket's file name for the data directory
// home: hearthd.sock for the user's own default data directory
// (~/.local/share/hearth under userHome, the home directory of the user's
// account), hearthd-<hash>.sock for any other, so that daemons of
// different data directories never contend for one socket, and a client
// that reaches a socket without an owner record reaches its own data
// directory's daemon (docs/decisions/0015-one-owner-per-home.md).
func SocketName(home, userHome string) string {
	if userHome != "" && filepath.Clean(home) == filepath.Join(userHome, ".local", "share", "hearth") {
		return "hearthd.sock"
	}
	sum := sha256.Sum256([]byte(filepath.Clean(home)))
	return "hearthd-" + hex.EncodeToString(sum[:6]) + ".sock"
}

// ReadyName is the readiness file beside a socket: for hearth's own names
// (hearthd.sock, hearthd-<hash>.sock) the same name with .ready, so daemons
// of several data directories in one runtime directory keep theirs apart;
// beside any other socket (an explicit MCP_SOCKET_PATH) hearthd.ready.
func ReadyName(socket string) string {
	base := filepath.Base(socket)
	if strings.HasPrefix(base, "hearthd") && strings.HasSuffix(base, ".sock") {
		return strings.TrimSuffix(base, ".sock") + ".ready"
	}
	return "hearthd.ready"
}

// RuntimeDir is the user's runtime directory: $XDG_RUNTIME_DIR when it is
// absolute, else /run/user/<uid> when that is a directory owned by the user
// and closed to others, else "".
func RuntimeDir(getenv Getenv) string {
	if dir := getenv("XDG_RUNTIME_DIR"); dir != "" && filepath.IsAbs(dir) {
		return dir
	}
	return userRuntimeDir()
}

// Home is the data directory: $HEARTH_HOME, else $XDG_DATA_HOME/hearth, else
// ~/.local/share/hearth. A relative HEARTH_HOME is refused rather than
// resolved: a daemon autostarted from another directory would find other
// data. A relative XDG_DATA_HOME is ignored, as the XDG spec says.
func Home(getenv Getenv) (string, error) {
	if v := getenv("HEARTH_HOME"); v != "" {
		if !filepath.IsAbs(v) {
			return "", fmt.Errorf("HEARTH_HOME=%q is not an absolute path; set it to one such as %s", v, filepath.Join(string(filepath.Separator)+"srv", "hearth"))
		}
		return filepath.Clean(v), nil
	}
	if v := getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "hearth"), nil
	}
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		h, err := os.UserHomeDir()
		if err != nil || !filepath.IsAbs(h) {
			return "", fmt.Errorf("cannot find the data directory (no home directory): set HEARTH_HOME")
		}
		home = h
	}
	return filepath.Join(home, ".local", "share", "hearth"), nil
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
