package hosted

import (
	"errors"
	"io"
	"net/url"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/hosted/route"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
)

// Remote is a remote server's connection as an instance runs it (a
// *remote.Conn, made by Options.Remote): frames in through the route.Peer,
// out newline-delimited on Stdout, Done when it ended.
type Remote interface {
	route.Peer
	Stdout() io.ReadCloser
	Done() <-chan struct{}
	Err() error
	Close() error
}

// upstream is what an instance runs: a child process or a remote
// connection.
type upstream interface {
	peer() route.Peer
	stdout() io.ReadCloser
	exited() <-chan struct{}
	// drainable: nothing can write to stdout any more once exited, so it
	// is read to its end.
	drainable() bool
	// finish closes the input and waits for the upstream to be done.
	finish()
	stop()
	exitString() string
	pid() int
}

type child struct{ p *supervisor.Process }

func (c child) peer() route.Peer        { return newStdinPeer(c.p.Stdin) }
func (c child) stdout() io.ReadCloser   { return upstreamStdout(c.p.Stdout) }
func (c child) exited() <-chan struct{} { return c.p.Exited() }
func (c child) drainable() bool         { return writersGone(c.p.Stdout) }
func (c child) finish()                 { c.p.Stdin.Close(); <-c.p.Done() }
func (c child) stop()                   { c.p.Stop() }
func (c child) exitString() string      { return c.p.ExitString() }
func (c child) pid() int                { return c.p.Pid }

type remoteUp struct{ c Remote }

func (r remoteUp) peer() route.Peer        { return r.c }
func (r remoteUp) stdout() io.ReadCloser   { return r.c.Stdout() }
func (r remoteUp) exited() <-chan struct{} { return r.c.Done() }
func (r remoteUp) drainable() bool         { return false }
func (r remoteUp) finish()                 { r.c.Close() }
func (r remoteUp) stop()                   { r.c.Close() }
func (r remoteUp) pid() int                { return 0 }
func (r remoteUp) exitString() string {
	if err := r.c.Err(); err != nil {
		return err.Error()
	}
	return "ended"
}

// IsRemote: the spec names a remote server (URL) rather than a command.
func (s Spec) IsRemote() bool { return s.URL != "" }

// program is what the catalog's identity and the messages name: the
// command, or the remote server's URL without its query.
func (s Spec) program() string {
	if s.IsRemote() {
		return RemoteLabel(s.URL)
	}
	return s.Command
}

// RemoteLabel shows a remote server's URL without what may be a secret:
// no user information, no query, no fragment.
func RemoteLabel(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "a remote server"
	}
	return u.Scheme + "://" + u.Host + strings.TrimSuffix(u.EscapedPath(), "/")
}

// errNoRemote: the table was made without a way to reach remote servers.
var errNoRemote = errors.New("this daemon cannot reach remote servers")
