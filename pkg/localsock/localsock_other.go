//go:build !unix && !windows

package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
)

// ErrAlreadyRunning reports that another daemon holds the socket's lock.
var ErrAlreadyRunning = errors.New("another hearthd is already serving this socket")

// errNoSocket is why a daemon off Unix and Windows does not serve its
// socket: the listener needs a peer check the system offers (decision
// 0044; Windows's is its access lists, decision 0047). hearthd stdio does
// not need it.
var errNoSocket = fmt.Errorf("hearthd serve: not supported on %s yet: the daemon's socket and its peer check are implemented for Unix and Windows only (docs/decisions/0044-platforms.md); use hearthd stdio", runtime.GOOS)

// socketListener is the Unix listener's shape, so the serving code is one;
// it is never made off Unix.
type socketListener struct {
	*net.UnixListener
	path      string
	activated bool
	private   bool
}

func (d *Daemon) socket() (*socketListener, error) { return nil, errNoSocket }

func listen(cfg Config) (*socketListener, error) { return nil, errNoSocket }

func (l *socketListener) close() { l.UnixListener.Close() }

func (l *socketListener) gone(ctx context.Context) <-chan struct{} { return make(chan struct{}) }
