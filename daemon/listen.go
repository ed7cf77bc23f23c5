package daemon

import (
	"path/filepath"

	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/localsock"
)

// ErrAlreadyRunning reports that another daemon holds the socket's lock.
var ErrAlreadyRunning = localsock.ErrAlreadyRunning

// socket returns the listening socket: the one systemd passed, else one we
// bind ourselves under the single-instance lock (pkg/localsock).
func (d *Daemon) socket() (*localsock.Listener, error) {
	ln, err := activated()
	if err != nil {
		return nil, err
	}
	if ln != nil {
		if d.cfg.ReadyFileDefault {
			d.cfg.ReadyFile = filepath.Join(filepath.Dir(ln.Path()), endpoint.ReadyName(ln.Path()))
		}
		return ln, nil
	}
	return listen(d.cfg)
}

// listen binds the socket cfg names.
func listen(cfg Config) (*localsock.Listener, error) {
	return localsock.Listen(cfg.SocketPath, localsock.Options{Private: cfg.SocketDirIsOurs, Mode: uint32(cfg.SocketMode)})
}
