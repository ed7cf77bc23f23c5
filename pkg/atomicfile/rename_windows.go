//go:build windows

package atomicfile

import (
	"os"

	"golang.org/x/sys/windows"
)

// renameOver renames old over new with MoveFileEx, replacing new
// (MOVEFILE_REPLACE_EXISTING) and returning only once the move is on the
// disk (MOVEFILE_WRITE_THROUGH): Windows syncs no directory (SyncDir does
// nothing there), so this is what makes the rename survive a crash.
func renameOver(old, new string) error {
	from, err := windows.UTF16PtrFromString(old)
	if err != nil {
		return err
	}
	to, err := windows.UTF16PtrFromString(new)
	if err != nil {
		return err
	}
	if err := windows.MoveFileEx(from, to, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH); err != nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
	}
	return nil
}
