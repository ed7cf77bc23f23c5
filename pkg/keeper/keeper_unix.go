//go:build unix

package keeper

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// Stop tells a keeper to end its upstream and every descendant now: it is
// the keeper's parent-death signal, and the supervisor's last word when the
// grace is over (a SIGKILL would kill the keeper, not the tree).
const Stop = syscall.SIGUSR2

// Main runs the keeper and exits if this process was started as one (Env
// set: supervisor.Options.KeeperPath); otherwise it returns at once. The
// daemon's main, and the main of a test binary that doubles as the keeper,
// call it first.
func Main() {
	mode, ok := os.LookupEnv(Env)
	if !ok {
		return
	}
	os.Unsetenv(Env) // not the upstream's
	os.Exit(keep(mode, os.Args[1:]))
}

// keep starts argv as its child, in a process group of the child's own,
// with the keeper's stdin, stdout and stderr, which it then closes: the
// upstream's pipes are held by the upstream and its descendants alone. It
// forwards SIGTERM, SIGINT and SIGHUP to the child's group. When the child
// exits, or the daemon dies, or Stop comes, it kills the child's group
// and then every descendant, wherever it moved (as a child subreaper it
// inherits the orphans; without one its tracker has recorded them), waits
// until none is left, and exits as the child did.
func keep(mode string, argv []string) int {
	// The child's parent-death signal (below) follows the thread that
	// forked it (go.dev/issue/27505).
	runtime.LockOSThread()
	nameKeeper()
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, Stop)
	// fd 3 is the death socket: its end (EOF) means every daemon holding
	// the other end is gone. A handOver byte on it says the daemon hands
	// this keeper to its successor, which holds that end from now on
	// (docs/decisions/0046-upstream-handover.md): the keeper disarms its
	// parent-death signal (only the thread it is set on can, the one this
	// function is locked to) and answers handedOver.
	daemonGone := make(chan struct{})
	handover := make(chan struct{}, 1)
	death := os.NewFile(3, "hearth-daemon")
	syscall.CloseOnExec(3)
	go func() {
		var b [64]byte
		for {
			n, err := death.Read(b[:])
			if err != nil {
				break // EOF: every daemon's end closed, the daemons with them
			}
			for _, c := range b[:n] {
				if c == HandOver {
					select {
					case handover <- struct{}{}:
					default:
					}
				}
			}
		}
		close(daemonGone)
	}()
	_ = mode // both modes watch the socket; BySignal also has the parent-death signal
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "hearth-keeper: no command")
		return 2
	}
	// Descendants that leave the upstream's group: as the subreaper the
	// keeper inherits them; otherwise its tracker records them from the
	// process table. Where it cannot read the table, it says so in the
	// upstream's log and ends the group alone.
	var tr *tracker
	if os.Getenv(DescendantsEnv) == ByTracker {
		tr = newTracker(os.Getpid(), proctable.List)
		if _, _, err := tr.scan(); err != nil {
			fmt.Fprintf(os.Stderr, "hearth-keeper: descendants that leave the upstream's process group are not tracked: %v\n", err)
			tr = nil
		}
	} else {
		setSubreaper()
	}
	os.Unsetenv(DescendantsEnv)
	attr := &syscall.SysProcAttr{Setpgid: true}
	setChildDeathSignal(attr) // a keeper SIGKILLed takes at least its child along
	proc, err := os.StartProcess(argv[0], argv, &os.ProcAttr{Env: os.Environ(), Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}, Sys: attr})
	if err != nil {
		fmt.Fprintf(os.Stderr, "hearth-keeper: %v\n", err)
		return 127
	}
	os.Stdin.Close()
	os.Stdout.Close()
	os.Stderr.Close()
	child := proc.Pid

	// One reaper for every child the keeper has: the upstream, and the
	// orphans that come to it. No child left means no descendant left: a
	// living descendant's chain of parents reaches the keeper.
	exited := make(chan syscall.WaitStatus, 1)
	none := make(chan struct{})
	go func() {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			switch {
			case err == syscall.EINTR:
			case err != nil:
				close(none)
				return
			case pid == child:
				exited <- ws
			}
		}
	}()

	// The tracker reads the table on a steady interval, so that a
	// descendant is recorded while its parent, a recorded process, lives.
	var tick <-chan time.Time
	born := time.Now()
	if tr != nil {
		tick = time.After(scanInterval(0))
	}

	var status syscall.WaitStatus
wait:
	for {
		select {
		case s := <-sigs:
			sig := s.(syscall.Signal)
			if sig != Stop {
				syscall.Kill(-child, sig)
			} else if tr != nil {
				tr.end(child)
			} else {
				syscall.Kill(-child, syscall.SIGKILL)
			}
		case <-handover:
			// Record the tree as it is now: when the daemon that took the
			// keeper over dies, the upstream's stdin closes with it and the
			// upstream may exit, orphaning what it started, before the
			// keeper's next read of the table (an upstream handed over
			// young, within its first read, lost every descendant so).
			if tr != nil {
				tr.scan()
			}
			disarmDeathSignal()
			death.Write([]byte{HandedOver})
		case <-daemonGone:
			daemonGone = nil
			if tr != nil {
				tr.end(child)
			} else {
				syscall.Kill(-child, syscall.SIGKILL)
			}
		case <-tick:
			tr.scan()
			tick = time.After(scanInterval(time.Since(born)))
		case status = <-exited:
			break wait
		}
	}
	if tr != nil {
		tr.end(child)
		return exitAs(status)
	}
	syscall.Kill(-child, syscall.SIGKILL)
	for {
		for _, pid := range descendants(os.Getpid()) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		select {
		case <-none:
			return exitAs(status)
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// exitAs ends the keeper as the child ended: with its exit code, or killed
// by its signal, so that the supervisor reports the child's end.
func exitAs(ws syscall.WaitStatus) int {
	if !ws.Signaled() {
		return ws.ExitStatus()
	}
	sig := ws.Signal()
	signal.Reset(sig)
	syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{}) // the child's core, if any, is the child's
	syscall.Kill(os.Getpid(), sig)
	time.Sleep(100 * time.Millisecond) // a signal the runtime turns into an exit of its own
	return 128 + int(sig)
}

// setSubreaper makes the keeper the subreaper of the upstream's orphans where
// the system has one (subreaper_linux.go sets it); elsewhere orphans go to
// init, and the keeper's tracker follows them
// (docs/decisions/0049-descendant-tracker.md).
var setSubreaper = func() {}

// nameKeeper names the keeper where the system takes a name apart from
// argv[0] (subreaper_linux.go sets it); elsewhere its argv[0],
// hearth-keeper, names it.
var nameKeeper = func() {}

// setChildDeathSignal arms the upstream's parent-death signal where there is
// one (subreaper_linux.go sets it).
var setChildDeathSignal = func(*syscall.SysProcAttr) {}

// descendants lists every process below pid where the keeper is a subreaper
// (subreaper_linux.go sets it); elsewhere its tracker finds the descendants,
// and it knows only its own children, whom its reaper waits for.
var descendants = func(int) []int { return nil }

// disarmDeathSignal clears the keeper's own parent-death signal where there
// is one (subreaper_linux.go sets it).
var disarmDeathSignal = func() {}
