package supervisor

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hearth-mcp/hearth/pkg/keeper"
)

// ProcessSpec describes a long-lived child that talks over its stdin and
// stdout, such as a hosted MCP server. Unlike Run's children it takes no
// slot of the daemon-wide cap (it is not a tool's work) and has no deadline:
// it runs until Stop, its own exit, or the daemon's end.
type ProcessSpec struct {
	Path string
	Args []string
	Dir  string
	Env  []string // nil: the daemon's environment; systemd's variables are always removed
	// Stderr receives the child's stderr (nil: discarded).
	Stderr io.Writer
	// Grace overrides the supervisor's SIGTERM-to-SIGKILL grace.
	Grace time.Duration
	// Keeper runs the child under a keeper (Options.KeeperPath; Unix; on
	// Windows the child's Job Object does the keeper's work): its
	// parent, a child subreaper, which ends the child and every descendant
	// of it, whatever session or group they moved to, when the child exits,
	// when the daemon dies, or when Stop's grace is over. Signals and the
	// exit status pass through it. Without a KeeperPath it is ignored.
	Keeper bool
}

// Process is a running long-lived child in a process group of its own, with
// the parent-death signal set on Linux, like every child of the supervisor.
type Process struct {
	Stdin  io.WriteCloser // the child's stdin; closing it is the polite way to ask it to stop
	Stdout io.ReadCloser  // the child's stdout
	Pid    int            // the keeper's, when there is one

	s        *Supervisor
	keeper   bool     // Pid is a keeper: the last word is keeper.Stop, not SIGKILL
	death    *os.File // the write end of a portable keeper's pipe: closing it tells the keeper the daemon is gone
	cmd      *exec.Cmd
	grace    time.Duration
	exited   chan struct{} // closed when the child (or its keeper) has exited
	done     chan struct{}
	stopOnce sync.Once
	stderr   *os.File      // the read end of the child's stderr (nil: discarded)
	released atomic.Bool   // handed to another daemon (Release)
	adopted  bool          // handed over by another daemon (Adopt): not this process's child
	acks     chan struct{} // an adopted keeper's answers to keeper.HandOver
	// Set before done is closed.
	exitCode int
	signal   string
	waitErr  error
}

// Start starts a long-lived child. Its group is SIGKILLed once the leader
// exits (no grandchild outlives it) and by Shutdown.
func (s *Supervisor) Start(spec ProcessSpec) (*Process, error) {
	grace := spec.Grace
	if grace <= 0 {
		grace = s.grace
	}
	if err := workDir(spec.Dir); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Path, err)
	}
	var cmd *exec.Cmd
	kept := spec.Keeper && keepersWork && s.keeperPath != ""
	if !kept {
		var err error
		if cmd, err = command(context.Background(), spec.Path, spec.Args, spec.Dir); err != nil {
			return nil, fmt.Errorf("start %s: %w", spec.Path, err)
		}
	} else {
		path, err := exec.LookPath(spec.Path)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", spec.Path, err)
		}
		if strings.ContainsRune(spec.Path, '/') {
			path = spec.Path // relative to Dir, where the keeper runs, as exec would take it
		}
		cmd = exec.Command(s.keeperPath, append([]string{path}, spec.Args...)...)
		cmd.Args[0] = "hearth-keeper"
	}
	cmd.Dir = spec.Dir
	cmd.Env = cleanEnv(spec.Env)
	prepare(cmd)
	var death *os.File
	if kept {
		// Every keeper has the death socket (fd 3): its end is how a
		// keeper handed to another daemon learns of that daemon's death
		// (docs/decisions/0046-upstream-handover.md), and the only way
		// where there is no parent-death signal.
		r, w, err := deathSocket()
		if err != nil {
			return nil, err
		}
		defer r.Close() // the keeper's copy is its own once it started
		death = w
		cmd.ExtraFiles = []*os.File{r}
		native := !s.portableKeeper
		if nativeKeeperDeath && native {
			cmd.Env = append(cmd.Env, keeper.Env+"="+keeper.BySignal)
			setKeeperSignal(cmd.SysProcAttr)
		} else {
			cmd.Env = append(cmd.Env, keeper.Env+"="+keeper.ByPipe)
			clearDeathSignal(cmd.SysProcAttr) // the socket alone tells it
		}
		cmd.Env = append(cmd.Env, keeper.DescendantsEnv+"="+keeper.DescendantsMode(native))
	}
	closeDeath := func() {
		if death != nil {
			death.Close()
		}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		closeDeath()
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeDeath()
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	var errR, errW *os.File
	if spec.Stderr != nil {
		if errR, errW, err = os.Pipe(); err != nil {
			closeDeath()
			inR.Close()
			inW.Close()
			outR.Close()
			outW.Close()
			return nil, err
		}
		cmd.Stderr = errW
	}
	err = start(cmd)
	inR.Close()
	outW.Close()
	if errW != nil {
		errW.Close()
	}
	if err != nil {
		closeDeath()
		inW.Close()
		outR.Close()
		if errR != nil {
			errR.Close()
		}
		return nil, startError(spec.Path, spec.Dir, err)
	}
	p := &Process{Stdin: inW, Stdout: outR, Pid: cmd.Process.Pid, s: s, cmd: cmd, grace: grace, exited: make(chan struct{}), done: make(chan struct{}),
		keeper: kept, death: death, stderr: errR}
	s.mu.Lock()
	s.live[p.Pid] = kept
	s.mu.Unlock()
	var copied sync.WaitGroup
	if errR != nil {
		copied.Add(1)
		go func() { defer copied.Done(); io.Copy(spec.Stderr, errR); errR.Close() }()
	}
	go func() {
		if !awaitExit(cmd.Process) {
			// Wait will hold this goroutine's thread while the child runs:
			// locked to it and never unlocked, the thread ends with the
			// goroutine instead of staying in the runtime's pool.
			runtime.LockOSThread()
		}
		p.waitErr = cmd.Wait()
		if p.released.Load() {
			return // another daemon serves it now; this one ends without it
		}
		close(p.exited)
		kill(p.Pid) // the group goes with its leader (a keeper ended its tree before it exited)
		awaitGroupGone(p.Pid, drainAfterKill)
		forget(p.Pid)
		closeDeath()
		p.Stdin.Close() // a dead child's stdin is nobody's to write
		s.mu.Lock()
		delete(s.live, p.Pid)
		s.mu.Unlock()
		if cmd.ProcessState != nil {
			p.exitCode, p.signal = exitStatus(cmd.ProcessState)
		} else {
			p.exitCode = -1
		}
		// A grandchild that escaped the group may hold stderr: bound the wait.
		stderrDone := make(chan struct{})
		go func() { copied.Wait(); close(stderrDone) }()
		select {
		case <-stderrDone:
		case <-time.After(drainAfterKill):
			if errR != nil {
				errR.Close()
			}
		}
		close(p.done)
	}()
	return p, nil
}

// Exited is closed as soon as the child has exited (under a keeper: once
// the keeper ended its tree and exited), before Done: from then on, what
// still comes on its stdout is not the child's.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Done is closed once the child has exited and its group is gone.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exit is how the child ended (valid once Done is closed): its exit code,
// or -1 and the signal's name.
func (p *Process) Exit() (code int, signal string) { return p.exitCode, p.signal }

// ExitString words Exit for an error message.
func (p *Process) ExitString() string {
	if p.adopted {
		return "exited (its status went to the daemon that started it)"
	}
	if p.signal != "" {
		return "killed by " + p.signal
	}
	return fmt.Sprintf("exit status %d", p.exitCode)
}

// end kills the child now: a keeper is told to end its whole tree, and
// SIGKILLed only if it has not within drainAfterKill (a descendant stuck in
// the kernel).
func (p *Process) end() {
	if !p.keeper {
		kill(p.Pid)
		return
	}
	signalKeeper(p.Pid)
	select {
	case <-p.done:
	case <-time.After(drainAfterKill):
		kill(p.Pid)
	}
}

// Stop ends the child as the MCP stdio transport asks: its stdin is closed
// and it gets half the grace to exit; then its group gets SIGTERM, and
// SIGKILL when the grace is over. So a child that ignores both is gone
// within the grace. Stop returns once the child has exited; calling it
// again only waits.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		p.Stdin.Close()
		t := time.NewTimer(p.grace / 2)
		defer t.Stop()
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		terminate(p.Pid)
		t.Reset(p.grace - p.grace/2)
		select {
		case <-p.done:
		case <-t.C:
			p.end()
		}
	})
	<-p.done
	p.Stdout.Close()
}

// awaitExit returns once the child p has exited, without reaping it, and
// reports true, where the runtime's poller can wait for that (Linux's
// pidfd, exitwait_linux.go); elsewhere it reports false at once and the
// caller's Wait blocks an OS thread while the child runs (and Start locks
// that goroutine to it, so the thread ends with the goroutine rather than
// staying in the runtime's pool).
var awaitExit = func(*os.Process) bool { return false }
