//go:build windows

package guard

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// lock takes the guard's exclusive lock in home, so checks run one at a
// time, with LockFileEx, the Windows counterpart of flock: it waits, and the
// system releases it when the handle closes or the process dies. A directory
// handle cannot carry a byte-range lock, so Windows uses a hidden lock file
// in home (the one trace a refused check leaves there).
func lock(home string) (unlock func(), err error) {
	path := filepath.Join(home, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open guard lock: %w", err)
	}
	h := windows.Handle(f.Fd())
	var ol windows.Overlapped
	if err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		windows.UnlockFileEx(h, 0, 1, 0, &ol) // closing the handle would release it too
		f.Close()
	}, nil
}
