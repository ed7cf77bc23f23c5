//go:build linux

package rawio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pipe makes a non-blocking pipe closed at the end of the test.
func pipe(t *testing.T) (r, w int) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	return p[0], p[1]
}

func TestReadWrite(t *testing.T) {
	r, w := pipe(t)
	buf := make([]byte, 16)
	if n, err := Read(r, buf); n != 0 || err != syscall.EAGAIN {
		t.Fatalf("empty pipe: %d %v, want EAGAIN", n, err)
	}
	if n, err := Write(w, []byte("hello\n")); n != 6 || err != nil {
		t.Fatalf("write: %d %v", n, err)
	}
	if n, err := Read(r, buf); err != nil || string(buf[:n]) != "hello\n" {
		t.Fatalf("read: %q %v", buf[:n], err)
	}
	// A full pipe takes nothing more, and says so without waiting.
	big := bytes.Repeat([]byte("x"), 1<<20)
	total := 0
	for {
		n, err := Write(w, big)
		total += n
		if err == syscall.EAGAIN {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if total == 0 {
		t.Fatal("nothing went into an empty pipe")
	}
	if n, err := Write(w, []byte("y")); n != 0 || err != syscall.EAGAIN {
		t.Fatalf("full pipe: %d %v, want EAGAIN", n, err)
	}
}

func TestEndOfInput(t *testing.T) {
	r, w := pipe(t)
	unix.Close(w)
	if n, err := Read(r, make([]byte, 4)); n != 0 || err != nil {
		t.Fatalf("closed writer: %d %v, want 0 and no error", n, err)
	}
}

func TestSplice(t *testing.T) {
	r1, w1 := pipe(t)
	r2, w2 := pipe(t)
	Write(w1, []byte("one line\n"))
	if n, err := Splice(r1, w2, 9); n != 9 || err != nil {
		t.Fatalf("splice: %d %v", n, err)
	}
	buf := make([]byte, 16)
	if n, _ := Read(r2, buf); string(buf[:n]) != "one line\n" {
		t.Fatalf("spliced %q", buf[:n])
	}
	if n, err := Splice(r1, w2, 9); n != 0 || err != syscall.EAGAIN {
		t.Fatalf("splice from an empty pipe: %d %v, want EAGAIN", n, err)
	}
}

func TestReady(t *testing.T) {
	r, w := pipe(t)
	if ev, err := Ready(w, unix.POLLOUT); err != nil || ev != unix.POLLOUT {
		t.Fatalf("empty pipe's write end: %#x %v", ev, err)
	}
	if ev, err := Ready(r, unix.POLLIN); err != nil || ev != 0 {
		t.Fatalf("empty pipe's read end: %#x %v", ev, err)
	}
	Write(w, []byte("x"))
	if ev, _ := Ready(r, unix.POLLIN); ev != unix.POLLIN {
		t.Fatalf("read end with a byte: %#x", ev)
	}
}

// Bad descriptors get the kernel's errors, never a wait.
func TestBadDescriptors(t *testing.T) {
	r, w := pipe(t)
	closed, _ := pipe(t)
	unix.Close(closed)
	for _, c := range []struct {
		name string
		call func() error
		want error
	}{
		{"read a closed descriptor", func() error { _, err := Read(closed, make([]byte, 1)); return err }, syscall.EBADF},
		{"write a closed descriptor", func() error { _, err := Write(closed, []byte("x")); return err }, syscall.EBADF},
		{"read a write end", func() error { _, err := Read(w, make([]byte, 1)); return err }, syscall.EBADF},
		{"write a read end", func() error { _, err := Write(r, []byte("x")); return err }, syscall.EBADF},
		{"splice from a closed descriptor", func() error { _, err := Splice(closed, w, 1); return err }, syscall.EBADF},
		{"a read of no bytes", func() error { Write(w, []byte("x")); _, err := Read(r, nil); return err }, nil},
	} {
		if err := c.call(); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if ev, err := Ready(closed, unix.POLLIN); err != nil || ev&unix.POLLNVAL == 0 {
		t.Errorf("poll a closed descriptor: %#x %v, want POLLNVAL", ev, err)
	}
}

func TestReaderWaitsInThePoller(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	rd, err := DupReader(p[0], "test")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() {
		buf := make([]byte, 16)
		n, err := rd.Read(buf)
		if err != nil {
			got <- err.Error()
		}
		got <- string(buf[:n])
	}()
	unix.Write(p[1], []byte("late\n"))
	if s := <-got; s != "late\n" {
		t.Fatalf("read %q", s)
	}
	unix.Close(p[1])
	if n, err := rd.Read(make([]byte, 4)); n != 0 || err != io.EOF {
		t.Fatalf("after the writer closed: %d %v, want EOF", n, err)
	}
	rd.Close()
	// The duplicate is closed, the caller's descriptor is not.
	if _, err := unix.FcntlInt(uintptr(p[0]), unix.F_GETFD, 0); err != nil {
		t.Fatalf("DupReader's Close closed the caller's descriptor: %v", err)
	}
	unix.Close(p[0])
}

// Close ends a read that waits, and returns only once it has.
func TestCloseEndsAWaitingRead(t *testing.T) {
	r, _ := pipe(t)
	rd, err := DupReader(r, "test")
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{})
	var readErr error
	done := make(chan struct{})
	go func() {
		close(entered)
		_, readErr = rd.Read(make([]byte, 4))
		close(done)
	}()
	<-entered
	time.Sleep(10 * time.Millisecond) // let it reach the poller: the test holds either way
	if err := rd.Close(); err != nil {
		t.Fatal(err)
	}
	<-done
	if !errors.Is(readErr, os.ErrClosed) {
		t.Fatalf("read during Close: %v, want os.ErrClosed", readErr)
	}
	if _, err := rd.Read(make([]byte, 4)); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("read after Close: %v", err)
	}
	if err := rd.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestReaderRefusesBlockingFiles(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "plain"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := NewReader(f); !errors.Is(err, ErrBlocking) {
		t.Fatalf("a blocking file: %v, want ErrBlocking", err)
	}
}

// A descriptor made non-blocking after os.NewFile wrapped it is not in the
// poller: a Reader could not wait on it, so none is made.
func TestReaderRefusesFilesOutsideThePoller(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	f := os.NewFile(uintptr(p[0]), "blocking-then-not")
	defer f.Close()
	if err := unix.SetNonblock(p[0], true); err != nil {
		t.Fatal(err)
	}
	if _, err := NewReader(f); !errors.Is(err, ErrNotPollable) {
		t.Fatalf("a file outside the poller: %v, want ErrNotPollable", err)
	}
}

// A regular file takes no part in the poller: DupReader refuses it and
// leaves the caller's descriptor open.
func TestDupReaderRefusesARegularFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "plain"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := DupReader(int(f.Fd()), "plain"); !errors.Is(err, ErrNotPollable) {
		t.Fatalf("a regular file: %v, want ErrNotPollable", err)
	}
	if _, err := f.Stat(); err != nil {
		t.Fatalf("the caller's descriptor: %v", err)
	}
}

// blockingPipe makes a pipe in blocking mode, as another holder of a
// client's stdio may turn it at any time, closed at the end of the test.
func blockingPipe(t *testing.T) (r, w int) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	return p[0], p[1]
}

// A raw call on a blocking descriptor would hold its thread and P for as
// long as it waited. Read and Write ask the kernel not to wait whatever
// the descriptor's mode (RWF_NOWAIT), and Splice into a pipe says
// SPLICE_F_NONBLOCK: an empty or full pipe is EAGAIN, as if non-blocking.
func TestCallsDoNotWaitOnABlockingPipe(t *testing.T) {
	r, w := blockingPipe(t)
	buf := make([]byte, 16)
	if _, _, e := unix.Syscall6(unix.SYS_PREADV2, uintptr(r), 0, 0, offCurrent, offCurrent, unix.RWF_NOWAIT); unsupported(e) {
		t.Skipf("this kernel's pipes take no RWF_NOWAIT (%v): Read and Write are guarded instead (TestReaderOnADescriptorTurnedBlocking)", e)
	}
	if n, err := Read(r, buf); n != 0 || err != syscall.EAGAIN {
		t.Fatalf("empty blocking pipe: %d %v, want EAGAIN", n, err)
	}
	big := bytes.Repeat([]byte("x"), 1<<20)
	total := 0
	for {
		n, err := Write(w, big)
		total += n
		if err == syscall.EAGAIN {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if n, err := Write(w, []byte("y")); n != 0 || err != syscall.EAGAIN {
		t.Fatalf("full blocking pipe: %d %v, want EAGAIN", n, err)
	}
	r2, w2 := pipe(t)
	Write(w2, []byte("z"))
	if n, err := Splice(r2, w, 1); n != 0 || err != syscall.EAGAIN {
		t.Fatalf("splice into a full blocking pipe: %d %v, want EAGAIN", n, err)
	}
	if n, err := Read(r, buf); n != len(buf) || err != nil {
		t.Fatalf("the blocking pipe's bytes: %d %v", n, err)
	}
	if fl, _ := unix.FcntlInt(uintptr(r), unix.F_GETFL, 0); fl&unix.O_NONBLOCK != 0 {
		t.Fatal("the descriptor's mode was changed: it is its holders'")
	}
}

// waitUntilParked waits until a goroutine running fn waits with one of
// the states given ("IO wait": in the poller; "syscall": in an ordinary
// system call, its P handed on). runtime.Stack stops the world: were the
// goroutine in a raw system call that waits, it would never return.
func waitUntilParked(t *testing.T, fn string, states ...string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if !strings.Contains(g, fn) {
				continue
			}
			head, _, _ := strings.Cut(g, "\n")
			for _, s := range states {
				if strings.Contains(head, "["+s) {
					return
				}
			}
		}
		runtime.Gosched()
	}
}

// A client may turn its stdin back to blocking after the daemon's Reader
// checked it (they share the open file description). The read waiting for
// the next frame must not hold a P: every stop of the world (each GC)
// would wait for it, and so would every other client of the daemon.
// Before the Reader's reads asked the kernel not to wait, this test hung
// in the world stop.
func TestReaderOnADescriptorTurnedBlocking(t *testing.T) {
	r, w := pipe(t)
	rd, err := DupReader(r, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if err := unix.SetNonblock(r, false); err != nil { // the duplicate shares the mode
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 16)
		n, err := rd.Read(buf)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(buf[:n])
	}()
	waitUntilParked(t, "rawio.(*Reader).Read", "IO wait", "syscall")
	runtime.GC() // the world stops, and starts again
	if _, err := unix.Write(w, []byte("frame\n")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "frame\n" {
		t.Fatalf("read %q", s)
	}
}

// Splice into a socket turned back to blocking (SPLICE_F_NONBLOCK covers
// only pipes) is an ordinary call: waiting for room, it holds a thread
// but no P, and the world still stops. Before Splice checked the mode,
// this test hung in the world stop.
func TestSpliceIntoASocketTurnedBlocking(t *testing.T) {
	s, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(s[0])
	defer unix.Close(s[1])
	chunk := bytes.Repeat([]byte("x"), 4096)
	for {
		if _, err := unix.SendmsgN(s[1], chunk, nil, nil, unix.MSG_DONTWAIT); err == syscall.EAGAIN {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	r, w := pipe(t)
	Write(w, []byte("late\n"))
	done := make(chan error, 1)
	go func() {
		n, err := Splice(r, s[1], 5)
		if err == nil && n != 5 {
			err = io.ErrShortWrite
		}
		done <- err
	}()
	waitUntilParked(t, "rawio.Splice", "syscall")
	runtime.GC()
	buf := make([]byte, 64<<10)
	var all []byte
	for !bytes.HasSuffix(all, []byte("late\n")) {
		n, err := unix.Read(s[0], buf)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, buf[:n]...)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Where the kernel cannot read or write without waiting (no RWF_NOWAIT
// for pipes), the call is guarded: raw while the descriptor is
// non-blocking, ordinary once it is not, so that a wait holds a thread
// but no P and the world still stops.
func TestGuardedCallsOnABlockingPipe(t *testing.T) {
	r, w := pipe(t)
	if n, err := read(r, make([]byte, 4), true); n != 0 || err != syscall.EAGAIN {
		t.Fatalf("guarded read of an empty non-blocking pipe: %d %v, want EAGAIN", n, err)
	}
	unix.SetNonblock(r, false)
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 16)
		n, err := read(r, buf, true)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(buf[:n])
	}()
	waitUntilParked(t, "rawio.read", "syscall")
	runtime.GC()
	if n, err := write(w, []byte("frame\n"), true); n != 6 || err != nil {
		t.Fatalf("guarded write: %d %v", n, err)
	}
	if s := <-got; s != "frame\n" {
		t.Fatalf("read %q", s)
	}
}
