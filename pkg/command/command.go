// Package command is the one rule by which the shim and the daemon tell a
// hosted server's program from its command: a bare name is looked up on
// PATH, anything else is a path (docs/hosting.md). The shim resolves on the
// client's PATH and directory first (Absolute), so that the client's
// environment chooses the program; the daemon resolves what is left bare,
// or what a config file names, on its own (Resolve).
package command

import (
	"os/exec"
	"path/filepath"
	"strings"
)

// IsName reports whether cmd is a bare program name, to be found on PATH:
// it holds no separator. On Windows / separates as \ does, so ./srv.cmd is
// a path there too.
func IsName(cmd string) bool {
	return !strings.ContainsRune(cmd, filepath.Separator) && !strings.ContainsRune(cmd, '/')
}

// Resolve makes a bare name absolute when it is found on PATH; a name not
// found, and a path, are returned as they are.
func Resolve(cmd string) string {
	if !IsName(cmd) {
		return cmd
	}
	if p, err := exec.LookPath(cmd); err == nil {
		return p
	}
	return cmd
}

// Absolute is Resolve, with a path made absolute against the working
// directory: what the shim sends, since the daemon runs elsewhere.
func Absolute(cmd string) string {
	if IsName(cmd) {
		return Resolve(cmd)
	}
	if abs, err := filepath.Abs(cmd); err == nil {
		return abs
	}
	return cmd
}
