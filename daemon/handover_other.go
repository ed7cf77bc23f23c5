//go:build !unix

package daemon

import (
	"errors"
	"os"

	"github.com/hearth-mcp/hearth/pkg/hosted"
)

// errNoHandOver: descriptors pass between daemons only on Unix.
var errNoHandOver = errors.New("hearthd restart hands upstreams over only on Unix")

// SendHanded refuses: no descriptor passing here.
func SendHanded(conn *os.File, list []hosted.Handed, lock *os.File) (int, error) {
	for _, h := range list {
		h.Files.Close()
	}
	return 0, errNoHandOver
}

// ReceiveHanded refuses: no descriptor passing here.
func ReceiveHanded(conn *os.File) ([]hosted.Handed, *os.File, error) {
	return nil, nil, errNoHandOver
}
