//go:build !unix

package rank

import "os"

// mapFile reads the file at path whole where mapping it is not available.
func mapFile(path string) ([]byte, func(), error) {
	b, err := os.ReadFile(path)
	return b, func() {}, err
}
