//go:build windows

package atomicfile

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// renameRetry bounds how long moveOver retries a rename another process
// blocks for a moment (see moveOver).
const renameRetry = 2 * time.Second

func init() { renameOver = moveOver }

// moveOver renames old over new with MoveFileEx, replacing new
// (MOVEFILE_REPLACE_EXISTING) and returning only once the move is on the
// disk (MOVEFILE_WRITE_THROUGH): Windows syncs no directory (SyncDir does
// nothing there), so this is what makes the rename survive a crash.
//
// A process that has new open without FILE_SHARE_DELETE (every Go program
// reading it: a shim reading the owner record, a client reading its
// config) makes the rename fail until it closes it; such reads are short,
// so the rename is retried for a while, as Go's own tools do on Windows.
func moveOver(old, new string) error {
	from, err := windows.UTF16PtrFromString(old)
	if err != nil {
		return err
	}
	to, err := windows.UTF16PtrFromString(new)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(renameRetry)
	pause := time.Millisecond
	for {
		err := windows.MoveFileEx(from, to, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
		if err == nil {
			return nil
		}
		busy := errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_LOCK_VIOLATION)
		if !busy || time.Now().After(deadline) {
			return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
		}
		time.Sleep(pause)
		pause = min(pause*2, 50*time.Millisecond)
	}
}
