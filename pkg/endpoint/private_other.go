//go:build !unix

package endpoint

import (
	"fmt"
	"io/fs"
	"os"
)

// PrivateDir creates dir; elsewhere than Unix, access is the system's ACLs'.
func PrivateDir(dir string) (fs.FileMode, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("create %s: %w", dir, err)
	}
	return 0, nil
}

// OwnFile checks that path is a regular file; elsewhere than Unix, access
// is the system's ACLs'.
func OwnFile(path string, secret bool) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	return nil
}

// OwnPlace: elsewhere than Unix, access is the system's ACLs'.
func OwnPlace(path string) error { return nil }
