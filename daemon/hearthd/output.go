package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
)

// What hearthd reads from a program it runs is bounded: a candidate's
// `version`, launchctl's and systemctl's messages. A program that prints
// more is stopped once it has, and its output refused: it cannot make the
// daemon or the command hold more than the bound
// (docs/decisions/0054-own-files-and-bounded-reads.md).

// errOutputBound: the program printed more than its bound.
var errOutputBound = errors.New("printed more than its bound")

// capped keeps what a program writes, up to max bytes; past it, the write
// fails (exec stops copying) and over is called once.
type capped struct {
	mu   sync.Mutex
	max  int
	buf  []byte
	over func()
	hit  bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hit {
		return 0, errOutputBound
	}
	if len(c.buf)+len(p) > c.max {
		c.hit = true
		c.over()
		return 0, errOutputBound
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// runCapped runs cmd (made with exec.CommandContext(ctx, ...), cancel
// ending ctx) and returns its stdout, and its stderr too when combined, up
// to max bytes in all: more stops it, an error saying so.
func runCapped(cmd *exec.Cmd, cancel context.CancelFunc, max int, combined bool) ([]byte, error) {
	out := &capped{max: max, over: cancel}
	cmd.Stdout = out
	if combined {
		cmd.Stderr = out
	}
	err := cmd.Run()
	out.mu.Lock()
	defer out.mu.Unlock()
	if out.hit {
		return out.buf, fmt.Errorf("%s printed more than %d bytes, and was stopped", cmd.Path, max)
	}
	return out.buf, err
}

// toolOutput bounds what launchctl or systemctl may print: a message or two.
const toolOutput = 64 << 10

// systemTool runs a system tool (launchctl, systemctl) and returns what it
// printed, stdout and stderr, within toolOutput.
func systemTool(path string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	return runCapped(exec.CommandContext(ctx, path, args...), cancel, toolOutput, true)
}
