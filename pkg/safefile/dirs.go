package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Dirs reaches many files inside one root by their slash-separated names,
// keeping the directory of the last one open: given names in path order (a
// listing from git or a walk, an index), the files of one directory follow
// each other and each is then one system call away, where the root alone
// would walk every directory of every name again. A directory that leads
// out of the root (a symbolic link to somewhere else) is an error, as with
// the root itself. A Dirs is not safe for concurrent use.
type Dirs struct {
	root *os.Root
	dir  string   // the directory cur is, as path.Split gives it
	cur  *os.Root // cur or err is set when dir is
	err  error
}

// NewDirs returns a Dirs of root; root stays the caller's to close.
func NewDirs(root *os.Root) *Dirs { return &Dirs{root: root} }

// split returns the root of name's directory and name's last element.
func (d *Dirs) split(name string) (*os.Root, string, error) {
	dir, base := path.Split(name)
	if dir == "" {
		return d.root, base, nil
	}
	if dir != d.dir || (d.cur == nil && d.err == nil) {
		d.Close()
		d.dir = dir
		d.cur, d.err = d.root.OpenRoot(filepath.FromSlash(dir))
	}
	return d.cur, base, d.err
}

// Lstat describes the file name without following it.
func (d *Dirs) Lstat(name string) (fs.FileInfo, error) {
	r, base, err := d.split(name)
	if err != nil {
		return nil, err
	}
	return r.Lstat(base)
}

// OpenNoFollow opens the regular file name as OpenInNoFollow does.
func (d *Dirs) OpenNoFollow(name string) (*os.File, error) {
	r, base, err := d.split(name)
	if err != nil {
		return nil, err
	}
	f, err := OpenInNoFollow(r, base)
	var nr *NotRegularError
	if errors.As(err, &nr) {
		nr.Name = name
	}
	return f, err
}

// Close closes the directory kept open (not the root).
func (d *Dirs) Close() error {
	var err error
	if d.cur != nil {
		err = d.cur.Close()
	}
	d.cur, d.err, d.dir = nil, nil, ""
	return err
}
