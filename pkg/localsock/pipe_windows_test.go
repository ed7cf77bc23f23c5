//go:build windows

package localsock

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listenHere serves a pipe for a socket path in a fresh directory.
func listenHere(t *testing.T) (*Listener, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hearth", "hearthd.sock")
	l, err := Listen(path, Options{Private: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Remove)
	return l, path
}

// A client dials the pipe, each end reads the other's user and pid, and a
// frame goes each way.
func TestPipeCarriesFramesAndNamesBothEnds(t *testing.T) {
	l, path := listenHere(t)
	me, err := Me()
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || strings.TrimSpace(string(b)) != PipeName(me, path) {
		t.Fatalf("the file at the socket's path: %q, %v; want the pipe's name", b, err)
	}
	accepted := make(chan *Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	c, err := Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := <-accepted
	if s == nil {
		t.FailNow()
	}
	defer s.Close()
	for name, p := range map[string]Peer{"the server's view of its client": s.Peer, "the client's view of its server": c.Peer} {
		if p.User != me || p.PID != os.Getpid() {
			t.Errorf("%s: %+v, want user %s pid %d", name, p, me, os.Getpid())
		}
		if err := Ours(p, name); err != nil {
			t.Error(err)
		}
	}
	if _, err := c.Write([]byte("{\"id\":1}\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := s.Read(buf)
	if err != nil || string(buf[:n]) != "{\"id\":1}\n" {
		t.Fatalf("server read %q, %v", buf[:n], err)
	}
	if _, err := s.Write([]byte("{\"result\":{}}\n")); err != nil {
		t.Fatal(err)
	}
	n, err = c.Read(buf)
	if err != nil || string(buf[:n]) != "{\"result\":{}}\n" {
		t.Fatalf("client read %q, %v", buf[:n], err)
	}
	// The client's end closing is the server's end of input.
	c.Close()
	if n, err := s.Read(buf); err != io.EOF {
		t.Fatalf("after the client closed: %d, %v; want EOF", n, err)
	}
}

// CloseRead ends a read in progress, as a session's drain needs.
func TestPipeCloseReadEndsAReadInProgress(t *testing.T) {
	l, path := listenHere(t)
	accepted := make(chan *Conn, 1)
	go func() { c, _ := l.Accept(); accepted <- c }()
	c, err := Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := <-accepted
	defer s.Close()
	read := make(chan error, 1)
	go func() { _, err := s.Read(make([]byte, 8)); read <- err }()
	if err := s.CloseRead(); err != nil {
		t.Fatal(err)
	}
	if err := <-read; err != io.EOF {
		t.Fatalf("the read in progress: %v, want EOF", err)
	}
	if _, err := s.Write([]byte("x")); err != nil {
		t.Fatalf("writing after CloseRead: %v", err)
	}
}

// Close wakes an Accept waiting for a client; a second daemon is refused
// while the first serves; once it is gone, Dial says nobody serves there.
func TestPipeListenerCloseAndAbsent(t *testing.T) {
	l, path := listenHere(t)
	if _, err := Listen(path, Options{Private: true}); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("a second Listen: %v, want ErrAlreadyRunning", err)
	}
	done := make(chan error, 1)
	go func() { _, err := l.Accept(); done <- err }()
	l.Remove()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("Accept after Close: %v, want ErrClosed", err)
	}
	_, err := Dial(path)
	if !Absent(err) {
		t.Fatalf("Dial with nobody serving: %v; want an error Absent reports", err)
	}
	// The next daemon serves the same place.
	l2, err := Listen(path, Options{Private: true})
	if err != nil {
		t.Fatal(err)
	}
	l2.Remove()
}

// Both ends wait in a read while each writes: the handles are overlapped,
// so a write never queues behind a read that waits (as a synchronous
// handle's would on Windows), and a read deadline applies.
func TestPipeReadsWhileWriting(t *testing.T) {
	l, path := listenHere(t)
	accepted := make(chan *Conn, 1)
	go func() { c, _ := l.Accept(); accepted <- c }()
	c, err := Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := <-accepted
	defer s.Close()
	got := make(chan string, 2)
	for _, end := range []*Conn{c, s} {
		go func() {
			b := make([]byte, 5)
			n, err := io.ReadFull(end, b)
			got <- string(b[:n]) + fmt.Sprint(err)
		}()
	}
	// Writes made while both reads wait (the reads may not have started
	// yet; either order must work).
	if _, err := s.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("world")); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{<-got: true, <-got: true}
	if !seen["hello<nil>"] || !seen["world<nil>"] {
		t.Fatalf("reads: %v", seen)
	}
	if err := c.SetReadDeadline(time.Now()); err != nil {
		t.Fatalf("a read deadline: %v", err)
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read past its deadline: %v", err)
	}
}
