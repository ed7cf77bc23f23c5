//go:build unix

package mcplocal

import (
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// A half-close is not a hang-up: the client still reads its replies. A full
// close is, and so is a pipe whose reader went away.
func TestHangupWatch(t *testing.T) {
	server, client := socketPair(t)
	h := newHangupWatch(server, connFD(server))
	defer h.Close()
	client.CloseWrite()
	if _, err := h.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read after half-close: %v", err)
	}
	select {
	case <-h.Gone():
		t.Fatal("a half-closed client counted as gone")
	case <-time.After(3 * hangupPoll):
	}
	client.Close()
	select {
	case <-h.Gone():
	case <-time.After(20 * hangupPoll):
		t.Fatal("a closed client never counted as gone")
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	in, inw, _ := os.Pipe()
	inw.Close()
	p := newHangupWatch(in, fileFD(w))
	defer p.Close()
	p.Read(make([]byte, 1)) // EOF starts the watch
	r.Close()
	select {
	case <-p.Gone():
	case <-time.After(20 * hangupPoll):
		t.Fatal("a stdout whose reader closed never counted as gone")
	}
	// A writer that is not a file is never watched.
	if fileFD(io.Discard) != nil {
		t.Fatal("io.Discard watched")
	}
}

func socketPair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	dir := t.TempDir()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: dir + "/s", Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: dir + "/s", Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return s, c
}
