//go:build !unix

package rank

import "github.com/hearth-mcp/hearth/pkg/safefile"

// mapFile reads the file at path whole where mapping it is not available,
// by the rule for hearth's own files (safefile.ReadOwn).
func mapFile(path string) ([]byte, func(), error) {
	b, err := safefile.ReadOwn(path, 1<<40)
	return b, func() {}, err
}
