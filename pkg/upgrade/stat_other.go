//go:build !unix

package upgrade

import (
	"errors"
	"os"
)

// errUnsupported: a daemon hands over only on Unix (decision 0046).
var errUnsupported = errors.New("an upgrade hands over only on Unix")

func stat(string) (Identity, os.FileInfo, error) { return Identity{}, nil, errUnsupported }

func safe(os.FileInfo) error { return errUnsupported }

func safePlace(string) error { return errUnsupported }
