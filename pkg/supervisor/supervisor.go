// Package supervisor is the one place in hearth that starts child processes
// for tools, so that no child outlives its request or the daemon
// (docs/architecture.md). Every child runs in its own process group; on
// cancellation or timeout the whole group gets SIGTERM (exec.Cmd's Cancel),
// a grace period (its WaitDelay), then SIGKILL, and after any exit the group
// is SIGKILLed again so no grandchild outlives its request. On Linux a direct child is also SIGKILLed by the kernel when
// the daemon dies. On Windows each child runs in a Job Object of its own
// instead, which ends its whole tree when the daemon dies or the child is
// stopped (docs/decisions/0048-windows-processes.md). A daemon-wide cap
// bounds how many children run at once.
package supervisor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/hearth-mcp/hearth/pkg/config/keys"
)

// Defaults.
const (
	DefaultGrace       = keys.DefaultKillGrace
	DefaultMaxChildren = keys.DefaultMaxChildren
	DefaultOutputLimit = 64 << 10
	// MaxLine bounds one line OnLine is handed; a longer one is dropped
	// whole (Result.LongLines).
	MaxLine = 64 << 10
	// DefaultLineBytes bounds what OnLine is handed in all unless a Spec
	// says otherwise: past it the child is stopped (KillReason "output").
	// It is far above what a listing of a large repository prints.
	DefaultLineBytes = 256 << 20
	// drainAfterKill bounds how long Run waits for output once the group is
	// dead: only a child that escaped its group (setsid) can hold a pipe open.
	drainAfterKill = time.Second
)

// Errors Run returns when it starts no child because ctx ended first. Test
// for them with errors.Is; callers map them to their own error codes.
var (
	// ErrBusy: every child slot stayed busy until ctx's deadline.
	ErrBusy = errors.New("every child slot stayed busy until the deadline")
	// ErrCancelled: ctx was cancelled while the call waited for a slot, or
	// as it got one. The error Run returns also matches ctx's own error
	// (context.Canceled).
	ErrCancelled = errors.New("cancelled before a child started")
)

// Options configure a Supervisor.
type Options struct {
	MaxChildren int           // children running at once across the daemon
	Grace       time.Duration // SIGTERM-to-SIGKILL grace unless a Spec says otherwise
	// KeeperPath is the executable that runs keepers (ProcessSpec.Keeper):
	// the daemon's own, whose main calls keeper.Main first. Empty: no keeper.
	KeeperPath string
	// PortableKeeper makes Linux keepers learn of the daemon's death
	// through the death socket, as they do where there is no parent-death
	// signal, and find the upstream's descendants with the tracker, as
	// where there is no subreaper, so that both ways of each are tested on
	// Linux (pkg/portable reads the switch).
	PortableKeeper bool
}

// Supervisor runs children for tools.
type Supervisor struct {
	grace      time.Duration
	keeperPath string
	// portableKeeper: Options.PortableKeeper.
	portableKeeper bool
	slots          chan struct{}
	mu             sync.Mutex
	live           map[int]bool // process group ids; true: the leader is a keeper
}

// New returns a Supervisor.
func New(o Options) *Supervisor {
	if o.MaxChildren <= 0 {
		o.MaxChildren = DefaultMaxChildren
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	return &Supervisor{grace: o.Grace, keeperPath: o.KeeperPath, portableKeeper: o.PortableKeeper, slots: make(chan struct{}, o.MaxChildren), live: map[int]bool{}}
}

// Spec describes one child.
type Spec struct {
	Path  string
	Args  []string
	Dir   string
	Env   []string // nil: the daemon's environment; systemd's variables are always removed
	Stdin io.Reader
	// Grace overrides the supervisor's SIGTERM-to-SIGKILL grace.
	Grace time.Duration
	// OutputLimit is how many trailing bytes of stdout and of stderr are kept.
	OutputLimit int
	// OnLine, if set, is called with each stdout line (without its newline),
	// in order, never after Run returns; a line over MaxLine is dropped.
	OnLine func(line []byte)
	// LineBytes bounds what OnLine is handed in all (0: DefaultLineBytes):
	// a child that prints more is stopped then, as on a cancellation, with
	// KillReason "output". Whatever a caller keeps of the lines is bounded
	// so.
	LineBytes int64
}

// Result is what became of a child.
type Result struct {
	ExitCode   int           // -1 when killed by a signal
	Signal     string        // the signal that ended it, if any
	Duration   time.Duration // from start to exit
	Stdout     string        // trailing output, trimmed
	Stderr     string
	Killed     bool   // the supervisor stopped it
	KillReason string // "cancel", "timeout" or "output" (past LineBytes) when Killed
	LongLines  int    // stdout lines over MaxLine, dropped
}

// Live is the number of children running now.
func (s *Supervisor) Live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}

// Run starts the child, waits for it, and returns its result. Cancelling ctx
// (or its deadline) terminates the child's whole group. Waiting for a free
// slot honours ctx: a deadline that passes in the queue is ErrBusy, a
// cancellation ErrCancelled. A child that exits non-zero is a Result, not an
// error; errors are failures to start, or ctx ending before a child started.
func (s *Supervisor) Run(ctx context.Context, spec Spec) (Result, error) {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Result{}, ErrBusy
		}
		return Result{}, notStarted(ctx.Err())
	}
	defer func() { <-s.slots }()
	if err := ctx.Err(); err != nil {
		return Result{}, notStarted(err)
	}

	grace := spec.Grace
	if grace <= 0 {
		grace = s.grace
	}
	limit := spec.OutputLimit
	if limit <= 0 {
		limit = DefaultOutputLimit
	}
	// A child that prints past LineBytes is stopped as on a cancellation.
	ctx, stopOutput := context.WithCancelCause(ctx)
	defer stopOutput(nil)
	lineBytes := spec.LineBytes
	if lineBytes <= 0 {
		lineBytes = DefaultLineBytes
	}
	if err := workDir(spec.Dir); err != nil {
		return Result{}, fmt.Errorf("start %s: %w", spec.Path, err)
	}
	cmd, err := command(ctx, spec.Path, spec.Args, spec.Dir)
	if err != nil {
		return Result{}, fmt.Errorf("start %s: %w", spec.Path, err)
	}
	cmd.Dir = spec.Dir
	cmd.Env = cleanEnv(spec.Env)
	cmd.Stdin = spec.Stdin // not a file: exec copies it, and Wait waits for that, at most WaitDelay once the child exited
	prepare(cmd)
	// When ctx ends first, the group gets SIGTERM (Cancel); a leader still
	// running grace later gets SIGKILL from exec (WaitDelay), and the whole
	// group gets it once Wait returns (below). Cancel runs before Wait
	// returns, so killed and reason are set by then.
	var killed bool
	var reason string
	cmd.Cancel = func() error {
		killed, reason = true, "cancel"
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, errTooMuchOutput):
			reason = "output"
		case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(cause, context.DeadlineExceeded):
			reason = "timeout"
		}
		terminate(cmd.Process.Pid)
		return nil
	}
	cmd.WaitDelay = grace

	// Our own pipes: Run waits for the process, then the group's death, then
	// the output, so a grandchild holding stdout cannot hold Run.
	outR, outW, err := os.Pipe()
	if err != nil {
		return Result{}, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return Result{}, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	started := time.Now()
	err = start(cmd)
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			return Result{}, notStarted(cerr) // ctx ended as the slot came free
		}
		return Result{}, startError(spec.Path, spec.Dir, err)
	}
	pid := cmd.Process.Pid
	s.mu.Lock()
	s.live[pid] = false
	s.mu.Unlock()

	var gate callbackGate
	stdout, stderr := newTail(limit), newTail(limit)
	var readers sync.WaitGroup
	readers.Add(2)
	lr := &lineReader{tail: stdout, onLine: spec.OnLine, gate: &gate, budget: lineBytes, over: func() { stopOutput(errTooMuchOutput) }}
	go func() { defer readers.Done(); lr.read(outR) }()
	go func() { defer readers.Done(); io.Copy(stderr, errR) }()

	// Wait's error is ignored once the child was waited for: a child that
	// exits cleanly on SIGTERM is a Result (Killed), not ctx's error.
	awaitExit(cmd.Process) // in the poller, so the wait holds no thread
	waitErr := cmd.Wait()
	kill(pid) // grandchildren die with the request, however the leader ended
	// SIGKILL is delivered asynchronously: wait until it has done its work.
	// Only a process stuck in the kernel outlasts the bound; the service's
	// cgroup is the last line for that and for children that called setsid.
	awaitGroupGone(pid, drainAfterKill)
	forget(pid)
	s.mu.Lock()
	delete(s.live, pid)
	s.mu.Unlock()

	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drainAfterKill):
		// A child that escaped the group holds the pipe: stop listening.
		outR.Close()
		errR.Close()
		<-done
	}
	gate.close() // no callback after this
	outR.Close()
	errR.Close()

	res := Result{Duration: time.Since(started), Stdout: stdout.String(), Stderr: stderr.String(),
		Killed: killed, KillReason: reason, LongLines: lr.long}
	if cmd.ProcessState == nil {
		return res, fmt.Errorf("wait for %s: %w", spec.Path, waitErr)
	}
	res.ExitCode, res.Signal = exitStatus(cmd.ProcessState)
	return res, nil
}

// workDir says what is wrong with a child's working directory (nil: it is
// one, or none was given). exec reports a missing one as the program's own
// ENOENT, naming the program (with a keeper, hearthd's own executable).
func workDir(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the working directory %s does not exist", dir)
	case err != nil:
		return fmt.Errorf("the working directory %s cannot be used: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("the working directory %s is not a directory", dir)
	}
	return nil
}

// startError is the error of a start that failed: the working directory's
// fault when it is now at fault (it went between the check and the
// start), else err.
func startError(path, dir string, err error) error {
	if derr := workDir(dir); derr != nil {
		err = derr
	}
	return fmt.Errorf("start %s: %w", path, err)
}

// notStarted is Run's error when ctx ended before a child started: a
// cancellation is ErrCancelled (and still ctx's error); a deadline that
// passed as the slot came free is ctx's error alone, a timeout.
func notStarted(err error) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: %w", ErrCancelled, err)
	}
	return err
}

// Shutdown kills every live child group (graceful daemon shutdown): SIGTERM,
// then SIGKILL when ctx ends or the grace passes.
func (s *Supervisor) Shutdown(ctx context.Context) {
	s.mu.Lock()
	pids := make([]int, 0, len(s.live))
	keepers := map[int]bool{}
	for pid, keeper := range s.live {
		pids = append(pids, pid)
		keepers[pid] = keeper
	}
	s.mu.Unlock()
	for _, pid := range pids {
		terminate(pid)
	}
	t := time.NewTimer(s.grace)
	defer t.Stop()
	for s.Live() > 0 {
		select {
		case <-ctx.Done():
		case <-t.C:
		case <-time.After(10 * time.Millisecond):
			continue
		}
		break
	}
	for _, pid := range pids {
		if keepers[pid] {
			signalKeeper(pid) // a SIGKILL would leave its tree to init
		} else {
			kill(pid)
		}
	}
}

// cleanEnv removes what systemd hands the daemon: a child must never notify,
// feed the watchdog or take the listening sockets.
func cleanEnv(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "NOTIFY_SOCKET=") || strings.HasPrefix(kv, "WATCHDOG_") || strings.HasPrefix(kv, "LISTEN_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// callbackGate lets Run promise that no OnLine call happens after it returns.
type callbackGate struct {
	mu     sync.Mutex
	closed bool
}

func (g *callbackGate) call(f func([]byte), line []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		f(line)
	}
}

func (g *callbackGate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// errTooMuchOutput stops a child whose lines passed Spec.LineBytes.
var errTooMuchOutput = errors.New("the child printed more than its bound")

// lineReader hands a child's stdout lines to OnLine (through the gate),
// whole lines only and within a budget, and keeps the tail of everything.
type lineReader struct {
	tail   *tailBuffer
	onLine func([]byte)
	gate   *callbackGate
	budget int64  // bytes OnLine may still be handed
	over   func() // called once the budget is spent
	long   int    // lines over MaxLine, dropped
}

func (lr *lineReader) read(r io.Reader) {
	br := bufio.NewReaderSize(r, MaxLine)
	inLong := false // the rest of a line over MaxLine: dropped
	for {
		line, err := br.ReadSlice('\n')
		lr.tail.Write(line)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if !inLong {
				lr.long++
			}
			inLong = true
			continue
		case inLong:
			inLong = false // its last piece
		case lr.onLine != nil && len(line) > 0 && (err == nil || errors.Is(err, io.EOF)):
			if lr.budget -= int64(len(line)); lr.budget < 0 {
				lr.over()
				lr.onLine = nil // nothing more is handed on
				break
			}
			lr.gate.call(lr.onLine, []byte(strings.TrimRight(string(line), "\r\n")))
		}
		if err != nil {
			return
		}
	}
}

// tailBuffer keeps the last n bytes written.
type tailBuffer struct {
	mu  sync.Mutex
	n   int
	buf []byte
}

func newTail(n int) *tailBuffer { return &tailBuffer{n: n} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.n {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.n:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "�"))
}

// LookPath finds a program in PATH, so that families can report whether a
// tool is present without importing os/exec themselves.
func LookPath(name string) (string, error) { return exec.LookPath(name) }

// Grace is the supervisor's default SIGTERM-to-SIGKILL grace period.
func (s *Supervisor) Grace() time.Duration { return s.grace }

// MaxChildren is the cap on children running at once.
func (s *Supervisor) MaxChildren() int { return cap(s.slots) }
