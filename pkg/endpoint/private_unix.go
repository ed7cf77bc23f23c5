//go:build unix

package endpoint

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// PrivateDir makes sure dir exists and only its user can enter it: it is
// created 0700 (with any missing parents), and an existing one must be a
// directory (a symlink to one is followed: a data directory moved to
// another disk) that belongs to this user. One open to others is narrowed
// to 0700; was is its mode before (0 when nothing was narrowed), so the
// caller can say so. Every file hearth writes in such a directory is out
// of other users' reach whatever its own mode.
func PrivateDir(dir string) (was fs.FileMode, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("create %s: %w", dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return 0, err
	}
	if !fi.IsDir() {
		return 0, fmt.Errorf("%s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return 0, fmt.Errorf("%s belongs to uid %d, not to you (uid %d): another user could read or replace what hearth keeps there; use a directory of your own", dir, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return 0, nil
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return 0, fmt.Errorf("%s is open to other users (mode %#o) and could not be narrowed to 0700: %w", dir, fi.Mode().Perm(), err)
	}
	return fi.Mode().Perm(), nil
}
