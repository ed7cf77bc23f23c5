//go:build !linux && !darwin

package proctable

import (
	"errors"
	"runtime"
)

// List: no process table is read on this system yet.
func List() ([]Proc, error) {
	return nil, errors.New("no process table on " + runtime.GOOS)
}
