//go:build !windows

package atomicfile

import "os"

// SyncDir makes the entries of dir durable: a file created, renamed or
// linked in dir before SyncDir returns nil survives a crash under that name.
// (Syncing a file makes its content durable, not its name.) On Windows it
// does nothing: a directory cannot be opened for FlushFileBuffers, and NTFS
// journals the rename itself.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
