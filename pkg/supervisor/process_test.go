//go:build linux

package supervisor

import (
	"bufio"
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a stderr sink safe to read while the child writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestProcessTalksOverStdio(t *testing.T) {
	s := New(Options{})
	var stderr lockedBuffer
	p, err := s.Start(ProcessSpec{Path: "/bin/sh", Args: []string{"-c", "echo hi >&2; while read l; do echo \"got $l\"; done"}, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	if s.Live() != 1 {
		t.Fatalf("live = %d, want 1", s.Live())
	}
	p.Stdin.Write([]byte("one\n"))
	line, err := bufio.NewReader(p.Stdout).ReadString('\n')
	if err != nil || line != "got one\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	p.Stop() // stdin closed: the loop ends by itself
	if code, sig := p.Exit(); code != 0 || sig != "" {
		t.Fatalf("exit %d %q, want a clean exit", code, sig)
	}
	if !strings.Contains(stderr.String(), "hi") {
		t.Fatalf("stderr %q", stderr.String())
	}
	if s.Live() != 0 {
		t.Fatalf("live = %d after Stop", s.Live())
	}
}

// A child that ignores both stdin closing and SIGTERM is killed, with its
// whole group, once the grace has passed.
func TestProcessIgnoringStdinAndTermIsKilled(t *testing.T) {
	s := New(Options{})
	p, err := s.Start(ProcessSpec{Path: "testdata/stubborn.sh", Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(p.Stdout).ReadString('\n')
	if line != "started\n" {
		t.Fatalf("read %q", line)
	}
	began := time.Now()
	p.Stop()
	if took := time.Since(began); took > 3*time.Second {
		t.Fatalf("Stop took %v with a 200ms grace", took)
	}
	if _, sig := p.Exit(); sig != "killed" {
		t.Fatalf("signal %q, want killed", sig)
	}
	if alive := groupAlive(p.Pid); len(alive) != 0 {
		t.Fatalf("survivors: %v", alive)
	}
}

func TestProcessExitIsReportedAndShutdownKills(t *testing.T) {
	s := New(Options{Grace: 200 * time.Millisecond})
	p, err := s.Start(ProcessSpec{Path: "/bin/sh", Args: []string{"-c", "exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if code, _ := p.Exit(); code != 3 || p.ExitString() != "exit status 3" {
		t.Fatalf("exit %d (%s)", code, p.ExitString())
	}
	q, err := s.Start(ProcessSpec{Path: "testdata/stubborn.sh"})
	if err != nil {
		t.Fatal(err)
	}
	s.Shutdown(t.Context())
	select {
	case <-q.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown left a long-lived child running")
	}
	if _, err := s.Start(ProcessSpec{Path: "/does/not/exist"}); err == nil || !strings.Contains(err.Error(), "/does/not/exist") {
		t.Fatalf("start of a missing program: %v", err)
	}
}
