// Package localsock is the daemon's local socket: listening on it, dialing
// it, and knowing who is at the other end. Every client of the socket (the
// shim, `hearthd status`, `stop`, `restart`, ...) dials it with Dial, which
// refuses, before a byte is sent, a socket or a server of another user; the
// daemon accepts with Listener.Accept, which reads the identity of each
// client for the daemon to check with Ours. It links no package net: the
// shim, which thousands may run, dials with system calls on the descriptor
// and stays a static binary without libc.
//
// One rule names its files: _unix.go serves every Unix, _linux.go and
// _darwin.go what differs between those (the peer credential), _windows.go
// Windows, and _other.go the systems none of the others of its part serve,
// which its build line names (they refuse: without a peer check nothing is
// served or dialed). acl.go is Windows's access-list rule written as a pure
// function, tested on every system.
package localsock

import (
	"errors"
	"fmt"
)

// Peer is who is at the other end of a connection, as the system says.
type Peer struct {
	PID  int    // the process; 0 when the system does not say
	User string // the user: the uid in decimal on Unix, the SID on Windows
}

// ErrNotOurs marks a socket, or a process behind it, that belongs to another
// user: never retried, never autostarted around.
var ErrNotOurs = errors.New("not ours")

// ErrAlreadyRunning reports that another daemon holds the socket's lock.
var ErrAlreadyRunning = errors.New("another hearthd is already serving this socket")

// ErrClosed is what Accept returns once the listener is closed.
var ErrClosed = errors.New("the socket's listener is closed")

// PeerError is an accepted connection whose peer could not be read: Accept closed
// it, and the next Accept goes on.
type PeerError struct{ Err error }

func (e *PeerError) Error() string { return "reading a client's credentials: " + e.Err.Error() }
func (e *PeerError) Unwrap() error { return e.Err }

// Ours says why p, which who names for a person ("the process serving
// PATH"), is not this process's own user (wrapping ErrNotOurs), or nil. The
// daemon asks it of every client, and Dial of every server.
func Ours(p Peer, who string) error {
	me, err := Me()
	if err != nil {
		return err
	}
	if p.User != me {
		return fmt.Errorf("%w: %s runs as %s, not as you (%s)", ErrNotOurs, who, userWords(p.User), userWords(me))
	}
	return nil
}

// Options say how Listen binds.
type Options struct {
	// Private: the path is hearth's own default, whose directory Listen
	// creates (or finds) the user's alone and tightens if it must; else
	// the directory is only checked to be one no other user can replace
	// the socket in.
	Private bool
	// Mode is the socket file's mode on Unix (0 means 0600); it has no
	// meaning on Windows, whose access list decides.
	Mode uint32
	// OwnLock: the path is this process's alone (hearthd-stdio-<pid>.sock),
	// so Remove deletes its lock file too.
	OwnLock bool
}

func (o Options) mode() uint32 {
	if o.Mode == 0 {
		return 0o600
	}
	return o.Mode
}
