//go:build unix

package main

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/localsock"
)

// TestAskStopSignalsAnOlderDaemon: a daemon that answers $/hearth/stop
// with method not found (one older than the request) is sent SIGTERM at
// the pid its status gave, as `hearthd stop` did before the request; one
// that refuses it otherwise is not signalled, and the refusal is said.
// The socket's end answers as such a daemon's session does, in the
// daemon's own words (jsonrpc.InternalRefused).
func TestAskStopSignalsAnOlderDaemon(t *testing.T) {
	for _, c := range []struct {
		name, reply string
		signalled   bool
	}{
		{"older daemon", `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found: $/hearth/stop is internal to hearth"}}`, true},
		{"refused", `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"not now"}}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "s.sock")
			ln, err := localsock.Listen(sock, localsock.Options{Private: true})
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Remove()
			go func() {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				defer conn.Close()
				r := bufio.NewScanner(conn)
				for r.Scan() {
					if strings.Contains(r.Text(), `"id":2`) {
						conn.Write([]byte(c.reply + "\n"))
					}
				}
			}()
			child := exec.Command("sleep", "60")
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			defer child.Process.Kill()
			pid, err := askStop(sock, child.Process)
			if !c.signalled {
				if err == nil || !strings.Contains(err.Error(), "not now") {
					t.Fatalf("askStop: %d %v, want the refusal", pid, err)
				}
				if !alive(child.Process) {
					t.Fatal("a daemon that refused the stop was signalled")
				}
				return
			}
			if err != nil || pid != child.Process.Pid {
				t.Fatalf("askStop: %d %v, want %d", pid, err, child.Process.Pid)
			}
			err = child.Wait()
			ws, _ := child.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
				t.Fatalf("the older daemon ended with %v, want SIGTERM", err)
			}
		})
	}
}
