//go:build unix

package upgrade

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

func stat(path string) (Identity, os.FileInfo, error) {
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

// safe: a regular executable file that this user or root owns and that no
// one else may write (as the config file is checked: decision 0014).
func safe(info os.FileInfo) error {
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
