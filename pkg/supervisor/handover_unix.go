//go:build unix

package supervisor

import (
	"github.com/hearth-mcp/hearth/pkg/keeper"

	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// deathSocket is a keeper's death socket: a connected pair of Unix stream
// sockets, close-on-exec both, so that no other child ever holds the
// daemon's end. The keeper reads EOF on its end once every copy of the
// daemon's end is closed: the daemon died, or the daemon it was handed to.
func deathSocket() (keeperEnd, daemonEnd *os.File, err error) {
	syscall.ForkLock.RLock() // no child is forked between the pair's creation and close-on-exec
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
		// The daemon's end is pollable: its watcher's read ends when the
		// end is closed, and reads take deadlines.
		err = syscall.SetNonblock(fds[1], true)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, fmt.Errorf("death socket: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "hearth-keeper-death"), os.NewFile(uintptr(fds[1]), "hearth-daemon-death"), nil
}

// handOverWait bounds the wait for a keeper's answer to keeper.HandOver.
const handOverWait = 2 * time.Second

// Handed is what a daemon hands its successor of one kept upstream
// (docs/decisions/0046-upstream-handover.md): the keeper's pid and new
// descriptors of the upstream's pipes and of the keeper's death socket,
// which the caller sends and then closes.
type Handed struct {
	KeeperPid int
	Stdin     *os.File // the write end of the upstream's stdin
	Stdout    *os.File // the read end of its stdout
	Stderr    *os.File // the read end of its stderr
	Death     *os.File // the daemon's end of the keeper's death socket
}

// Close closes the descriptors (once sent, or when the hand-over failed).
func (h *Handed) Close() {
	for _, f := range []*os.File{h.Stdin, h.Stdout, h.Stderr, h.Death} {
		if f != nil {
			f.Close()
		}
	}
}

// ErrNotHandable: the process cannot outlive this daemon (no keeper, or it
// exited).
var ErrNotHandable = errors.New("only a running kept upstream can be handed over")

// Release prepares a kept upstream to be handed to another daemon: the
// keeper is told, disarms its parent-death signal and answers; the
// returned descriptors are duplicates the caller sends. From then on this
// supervisor forgets the process: its exit is not reported here, and
// neither Stop nor Shutdown reaches it. Until the caller closes its own
// copies (and exits), the keeper still sees this daemon as alive.
func (p *Process) Release() (*Handed, error) {
	if !p.keeper || p.death == nil || p.stderr == nil {
		return nil, ErrNotHandable
	}
	select {
	case <-p.exited:
		return nil, ErrNotHandable
	default:
	}
	if _, err := p.death.Write([]byte{keeper.HandOver}); err != nil {
		return nil, fmt.Errorf("tell keeper %d: %w", p.Pid, err)
	}
	if p.acks != nil { // adopted: the watcher reads the socket
		select {
		case <-p.acks:
		case <-time.After(handOverWait):
			return nil, fmt.Errorf("keeper %d did not answer the hand-over", p.Pid)
		}
	} else {
		p.death.SetReadDeadline(time.Now().Add(handOverWait))
		var b [1]byte
		if _, err := io.ReadFull(p.death, b[:]); err != nil || b[0] != keeper.HandedOver {
			return nil, fmt.Errorf("keeper %d did not answer the hand-over: %v", p.Pid, err)
		}
		p.death.SetReadDeadline(time.Time{})
	}
	h := &Handed{KeeperPid: p.Pid}
	var err error
	dup := func(f any) *os.File {
		if err != nil {
			return nil
		}
		sc, ok := f.(syscall.Conn)
		if !ok {
			err = errors.New("not a file")
			return nil
		}
		rc, rerr := sc.SyscallConn()
		if rerr != nil {
			err = rerr
			return nil
		}
		var nfd int
		cerr := rc.Control(func(fd uintptr) {
			syscall.ForkLock.RLock()
			nfd, err = syscall.Dup(int(fd))
			if err == nil {
				syscall.CloseOnExec(nfd)
			}
			syscall.ForkLock.RUnlock()
		})
		if cerr != nil {
			err = cerr
		}
		if err != nil {
			return nil
		}
		return os.NewFile(uintptr(nfd), "handed")
	}
	h.Stdin, h.Stdout, h.Stderr, h.Death = dup(p.Stdin), dup(p.Stdout), dup(p.stderr), dup(p.death)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("hand over keeper %d: %w", p.Pid, err)
	}
	p.released.Store(true)
	p.s.mu.Lock()
	delete(p.s.live, p.Pid)
	p.s.mu.Unlock()
	return h, nil
}

// Adopt serves a kept upstream another daemon handed over (Release): this
// process is not the keeper's parent and cannot wait for it; the keeper's
// exit shows as the end of its death socket, which only the keeper holds
// the other end of. Its exit status is not known here (ExitString says
// so). stderr receives the upstream's stderr.
func (s *Supervisor) Adopt(h *Handed, stderr io.Writer, grace time.Duration) *Process {
	if grace <= 0 {
		grace = s.grace
	}
	p := &Process{Stdin: h.Stdin, Stdout: h.Stdout, Pid: h.KeeperPid, s: s, grace: grace, exited: make(chan struct{}), done: make(chan struct{}),
		keeper: true, death: h.Death, stderr: h.Stderr, adopted: true, acks: make(chan struct{}, 1)}
	s.mu.Lock()
	s.live[p.Pid] = true
	s.mu.Unlock()
	copied := make(chan struct{})
	go func() {
		if stderr == nil {
			stderr = io.Discard
		}
		io.Copy(stderr, h.Stderr)
		close(copied)
	}()
	go func() {
		var b [64]byte
		for {
			n, err := h.Death.Read(b[:])
			if err != nil {
				break // the keeper exited: it ended its tree first
			}
			for _, c := range b[:n] {
				if c == keeper.HandedOver {
					select {
					case p.acks <- struct{}{}:
					default:
					}
				}
			}
		}
		if p.released.Load() {
			return
		}
		close(p.exited)
		p.Stdin.Close()
		s.mu.Lock()
		delete(s.live, p.Pid)
		s.mu.Unlock()
		p.exitCode = -1
		select {
		case <-copied:
		case <-time.After(drainAfterKill):
			h.Stderr.Close()
		}
		close(p.done)
	}()
	return p
}
