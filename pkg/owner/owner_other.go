//go:build !unix && !windows

package owner

import (
	"errors"
	"os"
)

// Lock is a held ownership of one data directory.
type Lock struct {
	home     string
	Narrowed os.FileMode
	Previous Record
}

var errUnsupported = errors.New("owning a data directory needs a Unix system")

// Acquire is not supported here.
func Acquire(home string) (*Lock, error) { return nil, errUnsupported }

// Home is the data directory this lock owns.
func (l *Lock) Home() string { return l.home }

// Publish is not supported here.
func (l *Lock) Publish(Record) error { return errUnsupported }

// Release is not supported here.
func (l *Lock) Release() {}

// Stale is not supported here.
func Stale(home string) (Record, bool) { return Record{}, false }

// Find is not supported here.
func Find(home string) (Record, State, error) { return Record{}, None, errUnsupported }

// File: no lock file here.
func (l *Lock) File() *os.File { return nil }

// Adopt: no hand-over here.
func Adopt(home string, f *os.File) (*Lock, error) { return nil, errUnsupported }
