//go:build unix

package upgrade

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hearth-mcp/hearth/pkg/endpoint"
)

// This system's own mechanisms, in place of the common file's defaults.
func init() {
	stat = unixStat
	safe = unixSafe
	safePlace = unixSafePlace
}

func unixStat(path string) (Identity, os.FileInfo, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Identity{}, nil, err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return Identity{}, nil, errors.New("no device and inode")
	}
	return Identity{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: info.Size(), ModTime: info.ModTime()}, info, nil
}

// unixSafe, the system's safe,: a regular executable file that this user or
// root owns and that no one else may write (as the config file is checked:
// decision 0014).
func unixSafe(info os.FileInfo) error {
	st := info.Sys().(*syscall.Stat_t)
	switch {
	case !info.Mode().IsRegular():
		return errors.New("not a regular file")
	case int(st.Uid) != os.Geteuid() && st.Uid != 0:
		return fmt.Errorf("owned by uid %d, neither you nor root", st.Uid)
	case info.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("others may write it (mode %v)", info.Mode().Perm())
	case info.Mode().Perm()&0o100 == 0:
		return errors.New("not executable")
	}
	return nil
}

// unixSafePlace, the system's safePlace,: no one but this user and root can
// change which file path names between the check and the run: a link at path
// is theirs, and so is every directory on the way to it, which only they may
// write (the config file's rule, decision 0014: endpoint.OwnPlace). Without
// it, another user who may write a directory on the way swaps in a file of
// theirs after the file was judged: it would be run, for its `version` or as
// the successor.
func unixSafePlace(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if fi, err := os.Lstat(abs); err != nil {
		return err
	} else if err := ownedHere(fi); err != nil {
		return fmt.Errorf("the link %s is %w", abs, err)
	}
	if err := endpoint.OwnPlace(abs); err != nil {
		// A directory of another user's is one that user may write too.
		return fmt.Errorf("others may write a directory on the way to it: %w", err)
	}
	return nil
}

// ownedHere: fi is this user's or root's.
func ownedHere(fi os.FileInfo) error {
	st := fi.Sys().(*syscall.Stat_t)
	if int(st.Uid) != os.Geteuid() && st.Uid != 0 {
		return fmt.Errorf("owned by uid %d, neither you nor root", st.Uid)
	}
	return nil
}
