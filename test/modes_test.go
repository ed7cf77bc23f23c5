//go:build unix

package test

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"
)

// script is a session with every kind of deterministic frame: good requests,
// bad frames, contract errors.
var script = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"same","version":"1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":"p","method":"ping"}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
	`not json`,
	`[1,2]`,
	`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}`,
	`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"daemon_status","arguments":{"x":1}}}`,
	`{"jsonrpc":"2.0","id":6,"method":"logging/setLevel","params":{"level":"debug"}}`,
	`{"jsonrpc":"2.0","id":7,"method":"resources/list"}`,
	`{"jsonrpc":"2.0","id":-8,"method":"ping"}`,
}

// TestStdioAndSocketAnswerIdentically plays the script over `hearthd stdio`
// and over the socket of `hearthd serve`; the replies are byte-for-byte equal
// (as a set: replies to tool calls are not ordered on an MCP connection).
func TestStdioAndSocketAnswerIdentically(t *testing.T) {
	input := strings.Join(script, "\n") + "\n"

	cmd := exec.Command(bin.hearthd, "stdio")
	cmd.Env = append(os.Environ(), "HEARTH_HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(input)
	stdioOut, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}

	d := startDaemon(t)
	c, err := net.Dial("unix", d.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(input))
	c.(*net.UnixConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	var socketOut strings.Builder
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		socketOut.WriteString(sc.Text() + "\n")
	}
	// On an initialized connection a tool call's reply leaves when ready, so
	// it may come before or after a later ping's: compare the replies as a
	// set of lines.
	sorted := func(s string) string {
		lines := strings.Split(strings.TrimSpace(s), "\n")
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	if got, want := sorted(socketOut.String()), sorted(string(stdioOut)); got != want {
		t.Fatalf("socket and stdio differ:\nsocket:\n%s\nstdio:\n%s", got, want)
	}
	if n := strings.Count(string(stdioOut), "\n"); n != len(script)-1 { // one notification
		t.Fatalf("%d replies for %d requests:\n%s", n, len(script)-1, stdioOut)
	}
}
