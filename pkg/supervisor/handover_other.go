//go:build !unix

package supervisor

import (
	"errors"
	"io"
	"os"
	"time"
)

// Handed is what a daemon hands its successor of one kept upstream; a
// hand-over needs Unix descriptor passing (docs/decisions/0046-upstream-handover.md).
type Handed struct {
	KeeperPid int
	Stdin     *os.File
	Stdout    *os.File
	Stderr    *os.File
	Death     *os.File
}

// Close closes the descriptors.
func (h *Handed) Close() {
	for _, f := range []*os.File{h.Stdin, h.Stdout, h.Stderr, h.Death} {
		if f != nil {
			f.Close()
		}
	}
}

// ErrNotHandable: upstreams cannot be handed to another daemon here.
var ErrNotHandable = errors.New("upstreams are handed over between daemons only on Unix")

// Release refuses: no hand-over on this system.
func (p *Process) Release() (*Handed, error) { return nil, ErrNotHandable }

// Adopt is never reached without a hand-over; it serves what it is given
// as a process this supervisor cannot wait for.
func (s *Supervisor) Adopt(h *Handed, stderr io.Writer, grace time.Duration) *Process {
	if grace <= 0 {
		grace = s.grace
	}
	done := make(chan struct{})
	close(done)
	return &Process{Stdin: h.Stdin, Stdout: h.Stdout, Pid: h.KeeperPid, s: s, grace: grace, exited: done, done: done}
}
