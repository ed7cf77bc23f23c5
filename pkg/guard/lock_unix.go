//go:build unix

package guard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lock takes the guard's exclusive lock on home, so
// concurrent daemons, and `hearthd migrate`, check and write the marker one
// at a time. It locks the directory itself with flock: nothing is created,
// so a refused home stays byte-for-byte as it was, and the kernel drops the
// lock if the process dies. NFS emulates flock with byte-range locks, which
// need a file open for writing; there (EBADF, ENOLCK, EOPNOTSUPP) the lock
// falls back to a hidden lock file in home.
func lock(home string) (unlock func(), err error) {
	dir, err := os.OpenFile(home, os.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("lock data directory: %w", err)
	}
	err = flock(dir)
	if err == nil {
		return func() { dir.Close() }, nil
	}
	dir.Close()
	if !errors.Is(err, unix.EBADF) && !errors.Is(err, unix.ENOLCK) && !errors.Is(err, unix.EOPNOTSUPP) {
		return nil, fmt.Errorf("lock data directory %s: %w", home, err)
	}
	return lockFile(home)
}

// lockFile is the fallback: flock on a hidden file in home, opened for writing.
func lockFile(home string) (unlock func(), err error) {
	path := filepath.Join(home, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open guard lock: %w", err)
	}
	if err := flock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// flock waits for an exclusive lock on f, retrying when a signal interrupts.
func flock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			return err
		}
	}
}
