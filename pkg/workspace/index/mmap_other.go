//go:build !unix

package index

func mapFile(path string) ([]byte, func() error, error) { return readWhole(path) }
