//go:build unix

package test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A client's stdin is an open file description the client shares with the
// shim and, once handed over, with the daemon, which reads it with raw
// system calls (decision 0041). A client that turns it back to blocking
// (here, as any Go program does by asking an os.File for its Fd) must not
// stall the daemon: a raw read waiting on it would hold a P, every stop of
// the world (each GC, which gctrace reports on the daemon's stderr) would
// wait for it, and so would every other client. Another client keeps being
// answered through two collections, and the first client is still served.
func TestClientTurningItsStdinBlockingStallsNoOne(t *testing.T) {
	d := startDaemon(t, "GODEBUG=gctrace=1")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p := &shimProc{t: t, cmd: exec.Command(bin.hearth), lines: make(chan string, 10000), stderr: &lockedBuffer{}, done: make(chan error, 1),
		answered: map[any]bool{}, stdin: w}
	p.cmd.Env = append(d.cmd.Env, "HEARTH_NO_AUTOSTART=1") // the daemon's socket and data directory
	p.cmd.Stderr = p.stderr
	p.cmd.Stdin = r // the same open file description as the test's r
	stdout, _ := p.cmd.StdoutPipe()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 4<<20), 4<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() { w.Close(); p.cmd.Process.Kill() })
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":"st","method":"tools/call","params":{"name":"daemon_status","arguments":{}}}`)
	st, _ := json.Marshal(p.recvID("st"))
	if !strings.Contains(string(st), `"transport":"direct"`) {
		t.Skip("the shim did not hand its stdio over (the daemon reads no client descriptor)")
	}
	// The client turns its stdin blocking (os.File.Fd does).
	r.Fd()
	// A frame wakes the daemon's reader; once it is answered the reader
	// reads again, on the descriptor now blocking, with nothing to read.
	p.send(`{"jsonrpc":"2.0","id":"turned","method":"ping"}`)
	if m := p.recvID("turned"); m["result"] == nil {
		t.Fatalf("ping: %v", m)
	}
	gcs := func() int { return strings.Count(d.stderr.String(), "gc ") }
	other := dialRaw(t, d.socket)
	other.initialize()
	for start := gcs(); gcs() < start+2; {
		other.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if line := other.recv(); !strings.Contains(line, `"tools"`) {
			t.Fatalf("tools/list: %.200s", line)
		}
	}
	p.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if m := p.recvID("after"); m["result"] == nil {
		t.Fatalf("the client's ping after it turned its stdin blocking: %v", m)
	}
}
