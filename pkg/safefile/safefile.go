// Package safefile opens the files hearth reads on a client's behalf: a
// repository's files (show_file, the index worker, index_status, the
// clarification documents) and the schema and example files of the schema
// catalog. A client names those files, so one may be a FIFO, a socket or a
// device: opening a FIFO for reading blocks until a writer comes, holding an
// OS thread and a descriptor, and reading a device may never end. Only
// regular files are opened here, and the open itself never blocks:
//
//  1. the name is checked without following it (Lstat; with a root, as the
//     root resolves it, so never out of the root);
//  2. it is opened with O_NONBLOCK and O_NOFOLLOW (relative to the root
//     when there is one: os.Root opens every component that way and follows
//     symbolic links itself, only inside the root);
//  3. the opened descriptor is checked again with fstat, which closes the
//     race between the check and the open;
//  4. O_NONBLOCK is cleared for the reads (regular files ignore it anyway).
//
// Anything but a regular file is refused with a *NotRegularError:
// "<name> is a FIFO, not a regular file". Directories a client names are
// opened and listed by OpenRootIn and ReadDirIn, which refuse anything but a
// directory the same way, before it could block.
//
// The files hearth keeps for itself, in its state, data and runtime
// directories, go through a stricter rule of the same kind (own.go:
// OpenOwn, ReadOwn, AppendOwn, CreateOwn, OwnDir): never a link, this
// user's own, writable by no one else, and read with a size bound.
package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// ErrNotRegular is what every *NotRegularError matches with errors.Is.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError refuses a name that is not a regular file.
type NotRegularError struct {
	Name string // the name as the caller gave it
	Kind string // "FIFO", "socket", "device", "directory", "symbolic link" or "special file"
}

func (e *NotRegularError) Error() string { return e.Name + " is a " + e.Kind + ", not a regular file" }

// Unwrap makes errors.Is(err, ErrNotRegular) true.
func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// Kind names the type of a file mode as NotRegularError does; "regular file"
// for a regular one.
func Kind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "regular file"
	case t&fs.ModeNamedPipe != 0:
		return "FIFO"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeDevice != 0, t&fs.ModeCharDevice != 0:
		return "device"
	case t&fs.ModeDir != 0:
		return "directory"
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}

func notRegular(name string, m fs.FileMode) error {
	return &NotRegularError{Name: name, Kind: Kind(m)}
}

// Open opens the regular file path for reading. A symbolic link as its last
// component is refused, not followed (links in the directories above it are
// followed as usual: use OpenIn to keep inside a directory).
func Open(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi.Mode())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, refine(err, path, func() (fs.FileInfo, error) { return os.Lstat(path) })
	}
	return checkOpened(f, path)
}

// OpenIn opens the regular file name inside root for reading. Symbolic links
// are followed as os.Root follows them: only while they stay inside root
// (a link or a parent directory leading out is an error that says the path
// escapes).
func OpenIn(root *os.Root, name string) (*os.File, error) {
	return openIn(root, name, true)
}

// OpenInNoFollow is OpenIn refusing a symbolic link as the last component
// (a *NotRegularError of kind "symbolic link"), as the index worker does:
// git lists a link as a file of its own.
func OpenInNoFollow(root *os.Root, name string) (*os.File, error) {
	return openIn(root, name, false)
}

func openIn(root *os.Root, name string, follow bool) (*os.File, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 && follow {
		if fi, err = root.Stat(name); err != nil {
			return nil, err
		}
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(name, fi.Mode())
	}
	// Were name replaced by a link since the Lstat, os.Root would still
	// follow it only inside root, and fstat below sees what was opened.
	f, err := root.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, refine(err, name, func() (fs.FileInfo, error) { return root.Stat(name) })
	}
	return checkOpened(f, name)
}

// checkOpened keeps f only if it is a regular file, and puts it back in
// blocking mode for the reads.
func checkOpened(f *os.File, name string) (*os.File, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(name, fi.Mode())
	}
	if err := clearNonblock(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// refine turns a failed open of something that turned out not to be a
// regular file since it was checked (a socket answers ENXIO, a link ELOOP)
// into a *NotRegularError; other errors are returned as they are.
func refine(err error, name string, stat func() (fs.FileInfo, error)) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return err
	}
	if fi, serr := stat(); serr == nil && !fi.Mode().IsRegular() {
		return notRegular(name, fi.Mode())
	}
	return err
}

// ReadFile reads the regular file path as Open opens it.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

// ReadFileIn reads the regular file name inside root as OpenIn opens it.
func ReadFileIn(root *os.Root, name string) ([]byte, error) {
	f, err := OpenIn(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

// ReadFileAt reads the regular file name inside the directory dir as OpenIn
// opens it.
func ReadFileAt(dir, name string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return ReadFileIn(root, name)
}

// readAll reads f to its end, sized by its stat as os.ReadFile is.
func readAll(f *os.File) ([]byte, error) {
	var buf bytes.Buffer
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() < 1<<30 {
		buf.Grow(int(fi.Size()) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(f)
	return buf.Bytes(), err
}

// OpenRootIn opens the directory name inside root as a root of its own,
// following links as os.Root does. Anything but a directory is refused
// before it is opened ("<name> is a FIFO, not a directory"): os.Root opens
// the last component without O_DIRECTORY, and a FIFO would block that open.
func OpenRootIn(root *os.Root, name string) (*os.Root, error) {
	fi, err := root.Stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, notDir(name, fi.Mode())
	}
	return root.OpenRoot(name)
}

// ReadDirIn reads the directory name inside root, sorted by file name, as
// os.ReadDir does. It is opened with O_DIRECTORY, so a FIFO or any other
// non-directory fails at once ("<name> is a FIFO, not a directory").
func ReadDirIn(root *os.Root, name string) ([]fs.DirEntry, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|dirFlags, 0)
	if err != nil {
		if fi, serr := root.Stat(name); serr == nil && !fi.IsDir() {
			return nil, notDir(name, fi.Mode())
		}
		return nil, err
	}
	defer f.Close()
	es, err := f.ReadDir(-1)
	slices.SortFunc(es, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return es, err
}

func notDir(name string, m fs.FileMode) error {
	return fmt.Errorf("%s is a %s, not a directory", name, Kind(m))
}
