package atomicfile

// SyncDir does nothing on Windows: a directory cannot be opened for
// FlushFileBuffers, and NTFS journals the rename itself. See syncdir.go.
func SyncDir(string) error { return nil }
