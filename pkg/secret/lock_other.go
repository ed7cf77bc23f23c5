//go:build !unix && !windows

package secret

import "errors"

func lockFile(string) (func(), error) {
	return nil, errors.New("no file locks on this system")
}
