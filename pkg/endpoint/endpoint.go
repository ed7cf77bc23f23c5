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
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// MaxSocketPath is this system's sun_path size minus the terminating NUL
// (107 bytes on Linux and Windows, 103 on macOS): a longer path would be
// refused or silently truncated by bind/connect.
const MaxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// Getenv reads one variable (os.Getenv, or a map's lookup in tests).
type Getenv func(string) string

// SocketPath returns the daemon's socket path and whether it is hearth's own
// default location (whose directory hearth creates private and checks is
// ours). MCP_SOCKET_PATH wins; else SocketName of the data directory in
// SocketDir.
func SocketPath(getenv Getenv) (path string, ours bool, err error) {
	if v := getenv("MCP_SOCKET_PATH"); v != "" {
		path = v
	} else {
		home, err := Home(getenv)
		if err != nil {
			return "", false, err
		}
		dir, err := SocketDir(runtime.GOOS, getenv, RuntimeDir(getenv), os.TempDir(), os.Getuid(), userHome())
		if err != nil {
			return "", false, err
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

// SocketDir is the directory of hearth's own socket on goos, given the
// user's runtime directory (RuntimeDir), the temporary directory, the uid
// and the account's home. On Unix: $XDG_RUNTIME_DIR/hearth, else the
// runtime directory /run/user/<uid>/hearth when it exists and is theirs (a
// client that passes its server a minimal environment drops
// XDG_RUNTIME_DIR, but the directory is still there), else
// $TMPDIR/hearth-<uid>. On Windows: %LOCALAPPDATA%\hearth, the per-user
// local application data every MCP client passes on (the SDKs' default
// environment keeps LOCALAPPDATA and USERPROFILE), else
// <profile>\AppData\Local\hearth; the directory is made the user's alone by
// its access list (docs/decisions/0047-windows-socket.md).
func SocketDir(goos string, getenv Getenv, runtimeDir, tmp string, uid int, accountHome string) (string, error) {
	if goos == "windows" {
		if v := getenv("LOCALAPPDATA"); isAbsOn(goos, v) {
			return joinOn(goos, v, "hearth"), nil
		}
		home := userHomeOn(goos, getenv, accountHome)
		if home == "" {
			return "", fmt.Errorf("cannot find your local application data directory (LOCALAPPDATA and USERPROFILE are unset): set MCP_SOCKET_PATH")
		}
		return joinOn(goos, home, "AppData", "Local", "hearth"), nil
	}
	if runtimeDir != "" {
		return joinOn(goos, runtimeDir, "hearth"), nil
	}
	return joinOn(goos, tmp, fmt.Sprintf("hearth-%d", uid)), nil
}

// isAbsOn is filepath.IsAbs as on goos, so that each system's choices are
// tested on any other (Unix's with package path, whatever the host's
// separator): on Windows a path is absolute with a drive and a separator
// (C:\ or C:/) or as a UNC path (\\server\share).
func isAbsOn(goos, p string) bool {
	if goos != "windows" {
		return path.IsAbs(p)
	}
	if strings.HasPrefix(p, `\\`) {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		('a' <= p[0]|0x20 && p[0]|0x20 <= 'z')
}

// joinOn is filepath.Join as on goos, for the paths isAbsOn accepts.
func joinOn(goos string, elem ...string) string {
	if goos != "windows" {
		return path.Join(elem...)
	}
	out := strings.TrimRight(elem[0], `\/`)
	for _, e := range elem[1:] {
		out += `\` + e
	}
	return out
}

// userHomeOn is the home directory every default location is under, as on
// goos: see UserHome.
func userHomeOn(goos string, getenv Getenv, accountHome string) string {
	vars := []string{"HOME"}
	if goos == "windows" {
		// Windows names the profile USERPROFILE; HOME is set only by some
		// shells (Git Bash, MSYS), so a client started from the Start menu
		// and one started from such a shell would otherwise differ.
		vars = []string{"USERPROFILE", "HOME"}
	}
	for _, v := range vars {
		if h := getenv(v); isAbsOn(goos, h) {
			if goos == "windows" {
				return strings.TrimRight(h, `\/`)
			}
			return path.Clean(h)
		}
	}
	return accountHome
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

// Place is a location hearth resolved and why it is that one, as
// `hearthd status` shows it.
type Place struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}

// Why a place is where it is.
const (
	WhyHearthHome  = "HEARTH_HOME"
	WhyConfigVar   = "HEARTH_CONFIG"
	WhyAccountData = "the default under your home directory; XDG_DATA_HOME is not consulted"
	WhyAccountConf = "the default under your home directory; XDG_CONFIG_HOME is not consulted"
)

// UserHome is the home directory every default location is under: $HOME
// when it is absolute (every MCP client passes HOME to its servers), else
// the account's home from the account database.
//
// No XDG base-directory variable is consulted for hearth's data, config or
// state: MCP clients pass them to some servers and drop them for others,
// so following them gave one user several data directories and config
// files depending on which client started the daemon
// (docs/decisions/0029-one-place-per-user.md).
//
// On Windows the profile, USERPROFILE, comes first and HOME second: every
// client passes USERPROFILE, only some shells set HOME (userHomeOn).
func UserHome(getenv Getenv) (string, error) {
	if h := userHomeOn(runtime.GOOS, getenv, userHome()); h != "" {
		return filepath.Clean(h), nil
	}
	return "", fmt.Errorf("cannot find your home directory (HOME is unset and the account has none): set HEARTH_HOME")
}

// Home is the data directory: $HEARTH_HOME, else ~/.local/share/hearth.
func Home(getenv Getenv) (string, error) {
	p, err := HomePlace(getenv)
	return p.Path, err
}

// HomePlace is Home and why. A relative HEARTH_HOME is refused rather than
// resolved: a daemon autostarted from another directory would find other
// data.
func HomePlace(getenv Getenv) (Place, error) {
	if v := getenv("HEARTH_HOME"); v != "" {
		if !filepath.IsAbs(v) {
			return Place{}, fmt.Errorf("HEARTH_HOME=%q is not an absolute path; set it to one such as %s", v, filepath.Join(string(filepath.Separator)+"srv", "hearth"))
		}
		return Place{filepath.Clean(v), WhyHearthHome}, nil
	}
	home, err := UserHome(getenv)
	if err != nil {
		return Place{}, err
	}
	return Place{filepath.Join(home, ".local", "share", "hearth"), WhyAccountData}, nil
}

// ConfigVar names the config file to read instead of the default. It is a
// location, not a setting (pkg/config/keys repeats it for the shim).
const ConfigVar = "HEARTH_CONFIG"

// ConfigPlace is the config file: $HEARTH_CONFIG if set (named is then
// true: it must exist), else ~/.config/hearth/config.toml.
func ConfigPlace(getenv Getenv) (p Place, named bool, err error) {
	if v := getenv(ConfigVar); v != "" {
		abs, err := filepath.Abs(v)
		if err != nil {
			return Place{}, true, fmt.Errorf("%s=%q: %w", ConfigVar, v, err)
		}
		return Place{abs, WhyConfigVar}, true, nil
	}
	home, err := UserHome(getenv)
	if err != nil {
		return Place{}, false, err
	}
	return Place{filepath.Join(home, ".config", "hearth", "config.toml"), WhyAccountConf}, false, nil
}

// StateDir is where hearth writes state that is not data: the autostarted
// daemon's log and the starters' lock. ~/.local/state/hearth.
func StateDir(getenv Getenv) (string, error) {
	home, err := UserHome(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "hearth"), nil
}

// Unfollowed lists, in words, what the XDG variables in this environment
// name that hearth does not use: a data directory or config file a user may
// have expected it to (an older hearth followed them). `hearthd status`,
// run from the user's shell, and the daemon at start report them.
func Unfollowed(getenv Getenv) []string {
	var out []string
	data, errD := HomePlace(getenv)
	if v := getenv("XDG_DATA_HOME"); errD == nil && filepath.IsAbs(v) {
		if dir := filepath.Join(v, "hearth"); dir != data.Path && isDir(dir) {
			out = append(out, fmt.Sprintf("%s (from XDG_DATA_HOME) is not the data directory hearth uses, %s: move its contents there, or set HEARTH_HOME=%s in the daemon's environment and every client's", dir, data.Path, dir))
		}
	}
	conf, _, errC := ConfigPlace(getenv)
	if v := getenv("XDG_CONFIG_HOME"); errC == nil && filepath.IsAbs(v) {
		if f := filepath.Join(v, "hearth", "config.toml"); f != conf.Path && isFile(f) {
			out = append(out, fmt.Sprintf("%s (from XDG_CONFIG_HOME) is not read: hearth reads %s; move it there", f, conf.Path))
		}
	}
	return out
}

func isDir(p string) bool  { fi, err := os.Stat(p); return err == nil && fi.IsDir() }
func isFile(p string) bool { fi, err := os.Stat(p); return err == nil && fi.Mode().IsRegular() }
