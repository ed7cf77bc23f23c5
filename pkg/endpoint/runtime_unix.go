//go:build unix

package endpoint

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// userRuntimeBase is where systemd-logind makes each user's runtime
// directory (/run/user/<uid>); a variable so tests can point it elsewhere.
var userRuntimeBase = "/run/user"

// userRuntimeDir is /run/user/<uid> when it is a real directory (not a
// symlink) owned by the user and closed to others, else "".
func userRuntimeDir() string {
	dir := filepath.Join(userRuntimeBase, strconv.Itoa(os.Getuid()))
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return ""
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR || int(st.Uid) != os.Getuid() || st.Mode&0o077 != 0 {
		return ""
	}
	return dir
}

// passwdFile is the account database userHome reads; a variable for tests.
var passwdFile = "/etc/passwd"

// directoryAccount, when set, is asked before passwdFile: macOS keeps its
// users' accounts in Directory Services, not in /etc/passwd
// (account_darwin.go). It returns passwd's seven fields, or nil.
var directoryAccount func() []string

// userHome is the home directory of the account running this process, from
// the account database rather than $HOME (which a test or a client may have
// changed), or "" when it cannot be read. It reads /etc/passwd itself:
// os/user would link the C library into the shim (on macOS every program
// links it anyway, and os/user is what reads Directory Services there).
func userHome() string {
	if f := accountEntry(); f != nil && filepath.IsAbs(f[5]) {
		return filepath.Clean(f[5])
	}
	return ""
}

// Account is the login name and shell of the account running this process,
// from the account database ("" for what it does not say): what a hosted
// server is given as USER, LOGNAME and SHELL whatever the environment of
// the client that started the daemon
// (docs/decisions/0042-upstream-environment.md).
func Account() (name, shell string) {
	f := accountEntry()
	if f == nil {
		return "", ""
	}
	if filepath.IsAbs(f[6]) {
		shell = f[6]
	}
	return f[0], shell
}

// accountEntry is the account database's record for this process's uid, as
// passwd's seven fields, or nil.
func accountEntry() []string {
	if directoryAccount != nil {
		if f := directoryAccount(); f != nil {
			return f
		}
	}
	return passwdEntry()
}

// passwdEntry is passwdFile's line for this process's uid, split into its
// seven fields, or nil.
func passwdEntry() []string {
	b, err := os.ReadFile(passwdFile)
	if err != nil {
		return nil
	}
	uid := strconv.Itoa(os.Getuid())
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) >= 7 && f[2] == uid {
			return f
		}
	}
	return nil
}
