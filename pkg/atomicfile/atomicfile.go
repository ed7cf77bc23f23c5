// Package atomicfile replaces a file's content all at once: a reader sees
// the old file or the whole new one, never a torn write, and a crash leaves
// one or the other (the new one once Write has returned). ReplaceIfUnchanged
// does so only if the file still holds what the caller expects at that very
// moment, and keeps what it replaced. It is also the one place that syncs a
// directory (SyncDir).
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// renameOver renames old over new: rename(2) replaces it in one step.
// rename_windows.go sets its own in its init.
var renameOver = os.Rename

// SyncDir makes the entries of dir durable: a file created, renamed or
// linked in dir before SyncDir returns nil survives a crash under that name.
// (Syncing a file makes its content durable, not its name.) On Windows it
// does nothing: a directory cannot be opened for FlushFileBuffers, and NTFS
// journals the rename itself (renameOver writes it through there).
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Write writes data to a temporary file beside path (so the rename stays
// on one file system), syncs it, gives it perm, renames it over path, and
// syncs the directory so that the rename, too, survives a crash.
func Write(path string, data []byte, perm os.FileMode) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = renameOver(tmp.Name(), path)
	}
	if err == nil {
		if serr := SyncDir(dir); serr != nil {
			err = fmt.Errorf("sync %s: %w", dir, serr)
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
