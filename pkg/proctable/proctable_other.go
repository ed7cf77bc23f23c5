//go:build !linux && !darwin && !windows

package proctable

import (
	"errors"
	"runtime"
	"time"
)

var errNoTable = errors.New("no process table on " + runtime.GOOS)

// List: no process table is read on this system yet.
func List() ([]Proc, error) { return nil, errNoTable }

// Details: nothing to fill.
func Details([]Proc) {}

// Started: unknown.
func Started(Proc) time.Time { return time.Time{} }

// Args: unknown.
func Args(int) ([]string, error) { return nil, errNoTable }

// Env: unknown.
func Env(int) ([]string, error) { return nil, errNoTable }

// UID: unknown.
func UID(int) (int, error) { return -1, errNoTable }
