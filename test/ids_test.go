//go:build unix

package test

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// frameConn is one client connection that exchanges raw frames.
type frameConn interface {
	send(line string)
	next() map[string]any
}

type socketFrames struct{ *rawConn }

func (s socketFrames) next() map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(s.recv()), &m); err != nil {
		s.t.Fatal(err)
	}
	return m
}

type shimFrames struct{ *shimProc }

func (s shimFrames) next() map[string]any { return s.recv() }

// pipeFrames is a child process spoken to on its stdin and stdout.
type pipeFrames struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    interface{ Write([]byte) (int, error) }
	lines chan string
}

func startPipe(t *testing.T, cmd *exec.Cmd) *pipeFrames {
	t.Helper()
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &pipeFrames{t: t, cmd: cmd, in: in, lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 4<<20), 4<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return p
}

func (p *pipeFrames) send(line string) {
	p.t.Helper()
	if _, err := p.in.Write([]byte(line + "\n")); err != nil {
		p.t.Fatal(err)
	}
}

func (p *pipeFrames) next() map[string]any {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatal("the process closed its stdout")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			p.t.Fatalf("%q: %v", line, err)
		}
		return m
	case <-time.After(20 * time.Second):
		p.t.Fatal("no frame in 20s")
	}
	return nil
}

// TestIDsKeepTheirType: 77 and "77" are two JSON-RPC ids. With a request 77
// in flight (an open subscriptions/listen), a request "77" is served, not
// refused as a duplicate, and a cancellation of 77 ends 77 only: both are
// answered with results, each under its own id, on every transport (`hearthd
// stdio`, the socket, the shim handing its pipes over and the shim
// relaying).
func TestIDsKeepTheirType(t *testing.T) {
	env, _, state := shimEnv(t)
	transports := []struct {
		name string
		open func(t *testing.T) frameConn
	}{
		{"hearthd stdio", func(t *testing.T) frameConn {
			cmd := exec.Command(bin.hearthd, "stdio")
			cmd.Env = append(append([]string(nil), env...), "HEARTH_HOME="+filepath.Join(state, "stdio-home"))
			return startPipe(t, cmd)
		}},
		{"socket", func(t *testing.T) frameConn {
			return socketFrames{dialRaw(t, startDaemon(t).socket)}
		}},
		{"shim direct", func(t *testing.T) frameConn { return shimFrames{startShim(t, env)} }},
		{"shim relay", func(t *testing.T) frameConn {
			return shimFrames{startShim(t, append(append([]string(nil), env...), "HEARTH_SHIM_RELAY=1"))}
		}},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := tr.open(t)
			c.send(`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{` + modernMeta + `}}`)
			if r := c.next(); r["id"] != "d" || r["result"] == nil {
				t.Fatalf("discover: %v", r)
			}
			c.send(`{"jsonrpc":"2.0","id":77,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + modernMeta + `}}`)
			if r := c.next(); r["method"] != "notifications/subscriptions/acknowledged" {
				t.Fatalf("listen 77: %v", r)
			}
			c.send(`{"jsonrpc":"2.0","id":"77","method":"tools/call","params":{"name":"daemon_status","arguments":{},` + modernMeta + `}}`)
			if r := c.next(); r["id"] != "77" || r["result"] == nil {
				t.Fatalf(`"77" while 77 is in flight: %v`, r)
			}
			// "77" is answered: cancelling "77" now names nothing, and
			// cancelling 77 ends the subscription, with its result.
			c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"77"}}`)
			c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":77}}`)
			if r := c.next(); r["id"] != 77.0 || r["result"] == nil {
				t.Fatalf("77 after its cancellation: %v", r)
			}
		})
	}
}
