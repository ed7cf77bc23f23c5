package daemon

import (
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/safefile"
)

// The state directory's parts: hosted servers' stderr logs, the catalog,
// the kept HTTP sessions.
const (
	stateServers  = "servers"
	stateCatalog  = "catalog"
	stateSessions = "http-sessions"
)

// privateState makes the state directory, and each directory of hearth's
// inside it, private as the daemon starts, whoever started it (the shim's
// autostart did it for itself alone): the directory is created 0700 or
// narrowed to it, and refused when another user owns it
// (endpoint.PrivateDir, which follows a link: a state directory kept
// elsewhere is fine); catalog/, servers/ and http-sessions/ are hearth's
// own, so each must be a real directory of this user's, never a link
// (safefile.OwnDir). Until then another user could have swapped an entry
// in: a catalog entry is answered to clients, a log written wherever a
// link points. What is in them is read by safefile's rule for hearth's own
// files.
// It returns the state directory's mode before, when it was narrowed.
func privateState(dir string) (was fs.FileMode, err error) {
	if was, err = endpoint.PrivateDir(dir); err != nil {
		return 0, fmt.Errorf("the state directory: %w", err)
	}
	for _, sub := range []string{stateServers, stateCatalog, stateSessions} {
		if err := safefile.OwnDir(filepath.Join(dir, sub)); err != nil {
			return 0, fmt.Errorf("the state directory: %w", err)
		}
	}
	return was, nil
}
