package catalog

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Identity is what tells one build of a server's code from another without
// running it: the resolved command and its arguments, the size and
// modification time of the command's file (and of the file a symbolic link
// to it names), of the script an interpreter runs, and for a package runner
// (npx, uvx, ...) the package it was asked for. An entry whose identity
// differs from the server's now is not answered from.
type Identity struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Files   []Stamp  `json:"files,omitempty"`
	// Package is the package a runner was asked for, as written
	// ("@modelcontextprotocol/server-memory@2025.4.1"); Pinned says it
	// names an exact version. Resolved is the version the server said it
	// was (serverInfo.version) the last time it ran: for an unpinned
	// package what the runner resolved then, for status and the log; it is
	// no part of the comparison, since it is only known once the server
	// runs (decision 0045).
	Package  string `json:"package,omitempty"`
	Pinned   bool   `json:"pinned,omitempty"`
	Resolved string `json:"resolved,omitempty"`
}

// Stamp is one file's size and modification time.
type Stamp struct {
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"modTime"`
}

// interpreters run a script named by an argument: the script is the
// server's code as much as the interpreter is.
var interpreters = regexp.MustCompile(`^(node|nodejs|bun|deno|python[0-9.]*|pypy[0-9.]*|ruby|perl|php|sh|bash|dash|zsh|java)$`)

// runners fetch and run a package named by their first argument that is
// not a flag.
var runners = map[string]bool{"npx": true, "bunx": true, "pnpx": true, "uvx": true, "pipx": true}

// runnerValueFlags take a value (skipped when looking for the package).
var runnerValueFlags = map[string]bool{"-p": true, "--package": true, "--from": true, "--python": true, "--with": true, "-c": true, "--call": true}

// Identify computes the identity of a command run in dir.
func Identify(command string, args []string, dir string) Identity {
	id := Identity{Command: command, Args: slices.Clone(args)}
	stamp := func(p string) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			id.Files = append(id.Files, Stamp{Path: p, Size: fi.Size(), ModTime: fi.ModTime().UTC()})
			if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
				if fi, err := os.Stat(real); err == nil {
					id.Files = append(id.Files, Stamp{Path: real, Size: fi.Size(), ModTime: fi.ModTime().UTC()})
				}
			}
		}
	}
	stamp(command)
	base := filepath.Base(command)
	switch {
	case interpreters.MatchString(base):
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			p := a
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				stamp(p)
				break
			}
		}
	case runners[base]:
		id.Package, id.Pinned = runnerPackage(base, args)
	}
	return id
}

// runnerPackage is the package a runner's arguments name, and whether it
// names an exact version.
func runnerPackage(runner string, args []string) (string, bool) {
	pkg := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if name, val, ok := strings.Cut(a, "="); ok && (name == "--package" || name == "--from") {
			pkg = val
			break
		}
		if runnerValueFlags[a] {
			if (a == "-p" || a == "--package" || a == "--from") && i+1 < len(args) {
				pkg = args[i+1]
				break
			}
			i++
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		pkg = a
		break
	}
	return pkg, pinned(runner, pkg)
}

var exactVersion = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]*)?$`)

// pinned: the spec names one exact version (name@1.2.3, name==1.2.3), so
// the runner runs the same code every time it is resolved.
func pinned(runner, spec string) bool {
	if runner == "uvx" || runner == "pipx" {
		_, v, ok := strings.Cut(spec, "==")
		return ok && exactVersion.MatchString(v)
	}
	at := strings.LastIndexByte(spec, '@')
	if at <= 0 {
		return false
	}
	return exactVersion.MatchString(spec[at+1:])
}

// Same reports whether two identities are of the same code (Resolved
// aside).
func (a Identity) Same(b Identity) bool {
	return a.Command == b.Command && slices.Equal(a.Args, b.Args) && a.Package == b.Package &&
		slices.EqualFunc(a.Files, b.Files, func(x, y Stamp) bool {
			return x.Path == y.Path && x.Size == y.Size && x.ModTime.Equal(y.ModTime)
		})
}
