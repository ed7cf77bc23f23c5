//go:build windows

package guard

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// lock takes the guard's exclusive lock in home with LockFileEx (the Windows
// counterpart of flock, released when the handle closes or the process dies).
func lock(home string) (func(), error) {
	path := filepath.Join(home, ".format_version.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open guard lock %s: %w", path, err)
	}
	var ol windows.Overlapped
	if err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
		f.Close()
	}, nil
}
