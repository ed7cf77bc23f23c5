//go:build windows

package owner

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// openFlags: Go's handles on Windows are not inherited by children anyway.
const openFlags = 0

// lockOffset is where the lock's byte lies: far past the pid, because a
// Windows byte-range lock is mandatory, and a lock over the pid would keep
// Find from reading it.
const lockOffset = 1 << 32

// tryLock takes a LockFileEx lock on f, exclusive or shared, without
// waiting (LOCKFILE_FAIL_IMMEDIATELY): false when another holds it in a
// conflicting way. The system releases it when the handle closes or the
// process ends, as the kernel drops a flock.
func tryLock(f *os.File, exclusive bool) (bool, error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := windows.Overlapped{Offset: lockOffset & 0xffffffff, OffsetHigh: lockOffset >> 32}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return false, nil
	}
	return err == nil, err
}

// unlock releases what tryLock took.
func unlock(f *os.File) {
	ol := windows.Overlapped{Offset: lockOffset & 0xffffffff, OffsetHigh: lockOffset >> 32}
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// alive reports whether a process with this pid is running: one that
// cannot be opened for being another user's is.
func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == 259 // STILL_ACTIVE
}

// Adopt: a planned restart hands its owner lock over on Unix only
// (docs/decisions/0046-upstream-handover.md); nothing calls it here.
func Adopt(home string, f *os.File) (*Lock, error) {
	f.Close()
	return nil, errors.New("the owner lock is not handed over on Windows")
}
