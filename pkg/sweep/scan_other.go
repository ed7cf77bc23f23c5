//go:build !linux && !darwin && !windows

package sweep

import (
	"errors"
	"os"
)

// errUnsupported: a system the sweep has no way for.
var errUnsupported = errors.New("the orphan sweep does not run on this system")

// scan: no way to read the processes' stdin on this system.
func scan() ([]Process, error) { return nil, errUnsupported }

func signal(int, uint64, bool) {}

func self() me { return me{pid: os.Getpid()} }
