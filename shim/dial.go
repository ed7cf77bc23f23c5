package shim

import "github.com/hearth-mcp/hearth/pkg/localsock"

// conn is the shim's end of the daemon's socket, and dial the one way it
// is reached: pkg/localsock's, which refuses a socket or a daemon of
// another user before a byte is sent, as every client of the socket does.
type conn = localsock.Conn

func dial(path string) (*conn, error) { return localsock.Dial(path) }

// errNotOurs is a socket or daemon that belongs to another user: never
// retried, never autostarted around.
var errNotOurs = localsock.ErrNotOurs

// absent reports whether a dial error means "nobody is serving there", the
// case in which starting a daemon is right.
func absent(err error) bool { return localsock.Absent(err) }
