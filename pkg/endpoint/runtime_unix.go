//go:build unix

package endpoint

import (
	"os"
	"path/filepath"
	"strconv"
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
