//go:build unix

package endpoint

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// OwnFile checks that a file hearth obeys or keeps a secret in (the config
// file, the HTTP token) is the user's own and out of other users' reach:
// a regular file (a symbolic link is followed: a config kept with one's
// dotfiles) that belongs to this user and that neither group nor others may
// write, nor read when secret; and that every directory above it, up to
// the root, belongs to this user or to root and is not writable by group
// or others, unless it is sticky (/tmp: others may not rename or remove
// what is not theirs). Otherwise another user could change what hearth
// does, or read the secret. The error says what is wrong and how to mend
// it.
func OwnFile(path string, secret bool) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to you (uid %d): another user could change it; use a file of your own", path, st.Uid, os.Getuid())
	}
	mask, what := fs.FileMode(0o022), "write"
	if secret {
		mask, what = 0o077, "read"
	}
	if perm := fi.Mode().Perm(); perm&mask != 0 {
		return fmt.Errorf("%s has mode %04o: other users could %s it; run chmod %s %s", path, perm, what, map[bool]string{true: "600", false: "go-w"}[secret], path)
	}
	return ownPlace(path, abs, real)
}

// OwnPlace checks that only this user and root can change which file path
// names: every directory above it, up to the root, as given and with its
// links resolved, belongs to this user or to root and is not writable by
// group or others, unless it is sticky. It is OwnFile's rule for the
// directories, for a file that may itself be root's (an installed binary).
func OwnPlace(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return err
	}
	return ownPlace(path, abs, real)
}

func ownPlace(path, abs, real string) error {
	seen := map[string]bool{}
	for _, p := range []string{abs, real} {
		for dir := filepath.Dir(p); !seen[dir]; dir = filepath.Dir(dir) {
			seen[dir] = true
			if err := ownDir(dir); err != nil {
				return fmt.Errorf("%s is in %w", path, err)
			}
		}
	}
	return nil
}

// ownDir: dir is the user's or root's and only they may change what is in
// it (or it is sticky).
func ownDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if int(st.Uid) != os.Getuid() && st.Uid != 0 {
		return fmt.Errorf("%s, which belongs to uid %d, neither you (uid %d) nor root: its owner could replace it", dir, st.Uid, os.Getuid())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0 {
		return fmt.Errorf("%s, which has mode %04o: other users could replace what is in it; run chmod go-w %s", dir, perm, dir)
	}
	return nil
}
