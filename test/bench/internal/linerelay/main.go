// Command linerelay runs a command and copies lines between its own stdio
// and the command's, nothing else: the least any process in the middle of
// a stdio MCP connection costs, which BenchmarkHostedCall sets beside
// `hearth run`.
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: linerelay COMMAND [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go copyLines(os.Stdin, in, func() { in.Close() })
	copyLines(out, os.Stdout, func() {})
	cmd.Wait()
}

// copyLines writes each line read from r to w as soon as it is whole.
func copyLines(r interface{ Read([]byte) (int, error) }, w interface{ Write([]byte) (int, error) }, done func()) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if _, werr := w.Write(line); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	done()
}
