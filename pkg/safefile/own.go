package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// The files hearth keeps for itself, in its state, data and runtime
// directories (catalog entries, session records, the owner record, the
// format marker, the readiness and lock files, indexes, logs), are read and
// written by one rule, whoever made the directory and whatever is in it:
//
//  1. the last component is never followed: hearth makes no symbolic link
//     there, so one is someone else's (O_NOFOLLOW; refused as a
//     *NotRegularError of kind "symbolic link");
//  2. the open never blocks (O_NONBLOCK): a FIFO answers at once;
//  3. what was opened is checked (fstat, so no swap between a check and the
//     open): a regular file, this user's own, that neither group nor others
//     may write (a *NotOwnError otherwise);
//  4. a read is bounded: a file larger than the caller's limit is refused
//     (*TooLargeError) before it is read.
//
// A directory of hearth's own (OwnDir) is a real directory, not a link,
// this user's, and 0700.

// NotOwnError refuses a file of hearth's own that another user owns or may
// change.
type NotOwnError struct {
	Name string
	Why  string // "belongs to uid 65534, not to you (uid 1000)", "has mode 0666: ..."
}

func (e *NotOwnError) Error() string {
	return e.Name + " " + e.Why + "; hearth reads and writes only its own files there"
}

// ErrNotOwn is what every *NotOwnError matches with errors.Is.
var ErrNotOwn = errors.New("not this user's own file")

// Unwrap makes errors.Is(err, ErrNotOwn) true.
func (e *NotOwnError) Unwrap() error { return ErrNotOwn }

// TooLargeError refuses a file over the size a reader allows.
type TooLargeError struct {
	Name  string
	Size  int64
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, more than the %d this file may hold", e.Name, e.Size, e.Limit)
}

// ErrTooLarge is what every *TooLargeError matches with errors.Is.
var ErrTooLarge = errors.New("file too large")

// Unwrap makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// OpenOwn opens the file path of hearth's own for reading, by the rule
// above.
func OpenOwn(path string) (*os.File, error) { return openOwn(path, os.O_RDONLY) }

// openOwn opens path with flag by the rule above (creating it 0600 when
// flag says so).
func openOwn(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|openFlags, 0o600)
	if err != nil {
		return nil, refine(err, path, func() (fs.FileInfo, error) { return os.Lstat(path) })
	}
	if err := checkOwn(f, path); err != nil {
		f.Close()
		return nil, err
	}
	if err := clearNonblock(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadOwn reads the file path of hearth's own whole, when it holds at most
// limit bytes.
func ReadOwn(path string, limit int64) ([]byte, error) {
	f, err := OpenOwn(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadLimited(f, path, limit)
}

// ReadLimited reads an opened regular file whole, when it holds at most
// limit bytes (read as it grows, the limit still holds).
func ReadLimited(f *os.File, name string, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, &TooLargeError{Name: name, Size: fi.Size(), Limit: limit}
	}
	b := make([]byte, 0, fi.Size()+bytes.MinRead)
	buf := bytes.NewBuffer(b)
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > limit {
		return nil, &TooLargeError{Name: name, Size: int64(buf.Len()), Limit: limit}
	}
	return buf.Bytes(), nil
}

// AppendOwn opens the file path of hearth's own for appending, creating it
// (0600) when there is none: a link is not followed, and an existing file
// must be this user's, regular and writable by no one else.
func AppendOwn(path string) (*os.File, error) {
	return openOwn(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND)
}

// CreateOwn creates the file path of hearth's own anew (0600), replacing
// whatever name was there (a file, or a link, which is removed, never
// followed): nothing is truncated through a name, so no link can point the
// write elsewhere.
func CreateOwn(path string) (*os.File, error) {
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|openFlags, 0o600)
		if err == nil {
			if err := clearNonblock(f); err != nil {
				f.Close()
				return nil, err
			}
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) || attempt > 0 {
			return nil, err
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
}

// OwnDir makes sure the directory dir of hearth's own exists and is
// private: created 0700 when missing; an existing one must be a directory
// itself, not a link to one, that belongs to this user, and is narrowed
// to 0700 when open to others. Its parent is the caller's (a state
// directory already made private).
func OwnDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is a %s, not a directory; hearth makes no link there: remove it", dir, Kind(fi.Mode()))
	}
	if why := owner(fi); why != "" {
		return fmt.Errorf("%s %s; hearth keeps only its own directories there: remove it", dir, why)
	}
	if fi.Mode().Perm()&0o077 != 0 && permsMean {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("%s is open to other users (mode %#o) and could not be narrowed to 0700: %w", dir, fi.Mode().Perm(), err)
		}
	}
	return nil
}

// checkOwn: the opened f is a regular file of this user's that neither
// group nor others may write.
func checkOwn(f *os.File, name string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return notRegular(name, fi.Mode())
	}
	if why := owner(fi); why != "" {
		return &NotOwnError{Name: name, Why: why}
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 && permsMean {
		return &NotOwnError{Name: name, Why: fmt.Sprintf("has mode %04o: other users could change it", perm)}
	}
	return nil
}
