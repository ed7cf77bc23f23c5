//go:build linux

package handoff

import (
	"errors"
	"io"
	"os"

	"github.com/hearth-mcp/hearth/pkg/rawio"
	"golang.org/x/sys/unix"
)

// StagePipe is the Outlet of a handed-over session (the daemon's side): the
// staging pipe, a pipe the shim made and keeps the read end of, and the
// client's stdout. A batch is written into the empty staging pipe in one
// write (a pipe with room takes it whole) and moved into stdout with
// splice(2), which takes each byte it moves out of the staging pipe as it
// puts it into stdout, in the kernel, where a kill cannot fall between the
// two. So each byte of a batch is, at every instant, either still staged
// (the shim writes it on, DrainStage) or in stdout: never both, never
// neither, and never half a line in stdout without its rest staged.
type StagePipe struct {
	R, W int // the staging pipe's ends, non-blocking
	Out  *FD // the client's stdout
}

// Stage implements Outlet. It goes through Out's lock, so that nothing is
// staged once Out is closed (the shim may be reading the pipe by then).
func (s *StagePipe) Stage(batch []byte) error {
	n, err := s.Out.call(func() (int, error) { return rawio.Write(s.W, batch) })
	if err == nil && n == len(batch) {
		return nil
	}
	// The pipe is empty and holds MaxBatch: a write takes it whole. Should
	// one not, what went in is taken back out, so that the staging pipe
	// never holds part of a line.
	s.Out.call(func() (int, error) { DrainStage(s.R); return 0, nil })
	if err == nil {
		err = io.ErrShortWrite
	}
	return err
}

// Move implements Outlet.
func (s *StagePipe) Move(n int) error { return s.Out.spliceFrom(s.R, n) }

// StageCapacity is how large a batch the staging pipe fd holds, at most
// MaxBatch.
func StageCapacity(fd int) (int, error) {
	n, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		return 0, os.NewSyscallError("fcntl", err)
	}
	return min(n, MaxBatch), nil
}

// DrainStage reads what is left in the staging pipe (the shim's side, once
// the daemon is gone): bytes of a batch the daemon never finished moving to
// the client, whole lines, for the shim to write on.
func DrainStage(fd int) []byte {
	var out []byte
	buf := make([]byte, 16<<10)
	for {
		n, err := unix.Read(fd, buf)
		if n > 0 {
			out = append(out, buf[:n]...)
		}
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			return out
		}
	}
}

// errStageEmpty: the staging pipe held fewer bytes than were to be moved.
var errStageEmpty = errors.New("handoff: staging pipe empty")
