package supervisor

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
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
	// Keeper runs the child under a small shell that leads its process
	// group (Linux): the parent-death signal reaches only a direct child,
	// so when the daemon dies the keeper kills the whole group, and a
	// grandchild that ignores its stdin closing (a server started through
	// npx) dies too. Signals and the exit status pass through it.
	Keeper bool
}

// keeperScript is the keeper: SIGUSR2 (its parent-death signal) kills the
// group; SIGTERM and the like are caught (so the child, in the same group,
// gets them with their default action) and the keeper waits on; it exits
// with the child's status. The child's stdin is passed on explicitly: an
// asynchronous command's would be /dev/null.
const keeperScript = `exec 3<&0
trap 'kill -KILL 0' USR2
trap ':' TERM INT HUP
"$@" 0<&3 3<&- &
pid=$!
exec 3<&-
while :; do wait $pid; st=$?; kill -0 $pid 2>/dev/null || exit $st; done`

// Process is a running long-lived child in a process group of its own, with
// the parent-death signal set on Linux, like every child of the supervisor.
type Process struct {
	Stdin  io.WriteCloser // the child's stdin; closing it is the polite way to ask it to stop
	Stdout io.ReadCloser  // the child's stdout
	Pid    int

	s        *Supervisor
	cmd      *exec.Cmd
	grace    time.Duration
	done     chan struct{}
	stopOnce sync.Once
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
	cmd := exec.Command(spec.Path, spec.Args...)
	keeper := spec.Keeper && keeperSignal != 0
	if keeper {
		if _, err := exec.LookPath(spec.Path); err != nil {
			return nil, fmt.Errorf("start %s: %w", spec.Path, err)
		}
		cmd = exec.Command("/bin/sh", append([]string{"-c", keeperScript, "hearth-keeper", spec.Path}, spec.Args...)...)
	}
	cmd.Dir = spec.Dir
	cmd.Env = cleanEnv(spec.Env)
	prepare(cmd)
	if keeper {
		setKeeperSignal(cmd.SysProcAttr)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	var errR, errW *os.File
	if spec.Stderr != nil {
		if errR, errW, err = os.Pipe(); err != nil {
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
		inW.Close()
		outR.Close()
		if errR != nil {
			errR.Close()
		}
		return nil, fmt.Errorf("start %s: %w", spec.Path, err)
	}
	p := &Process{Stdin: inW, Stdout: outR, Pid: cmd.Process.Pid, s: s, cmd: cmd, grace: grace, done: make(chan struct{})}
	s.mu.Lock()
	s.live[p.Pid] = struct{}{}
	s.mu.Unlock()
	var copied sync.WaitGroup
	if errR != nil {
		copied.Add(1)
		go func() { defer copied.Done(); io.Copy(spec.Stderr, errR); errR.Close() }()
	}
	go func() {
		p.waitErr = cmd.Wait()
		kill(p.Pid) // the group goes with its leader
		awaitGroupGone(p.Pid, drainAfterKill)
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

// Done is closed once the child has exited and its group is gone.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exit is how the child ended (valid once Done is closed): its exit code,
// or -1 and the signal's name.
func (p *Process) Exit() (code int, signal string) { return p.exitCode, p.signal }

// ExitString words Exit for an error message.
func (p *Process) ExitString() string {
	if p.signal != "" {
		return "killed by " + p.signal
	}
	return fmt.Sprintf("exit status %d", p.exitCode)
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
			kill(p.Pid)
		}
	})
	<-p.done
	p.Stdout.Close()
}
