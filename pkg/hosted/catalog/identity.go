package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/safefile"
)

// Identity is what tells one build of a server's code from another without
// running it: the resolved command and its arguments, the size and
// modification time of the command's file (and of the file a symbolic link
// to it names), of the script an interpreter runs, of the module `python -m`
// runs from the server's directory, of the files a `sh -c` command line or
// a launcher script names, and the content (SHA-256) of each of those files
// that is small (a script; an interpreter's own binary is known by its size
// and time); for a package runner (npx, uvx, ...) the package it was asked
// for. An entry whose identity differs from the server's now is not answered
// from. What it cannot see (docs/hosting.md, "What identifies a server's
// code"): an installed package's files (a `python -m` module from
// site-packages, what a script requires), what a launcher's launcher names,
// files the server reads as it runs.
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

// Stamp is one file's size and modification time, and the SHA-256 of its
// content when it is at most hashLimit bytes.
type Stamp struct {
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"modTime"`
	SHA256  string    `json:"sha256,omitempty"`
}

// The reach of an identity: files up to hashLimit are hashed (2 ms for
// the largest, once per instance), launcher scripts up to launcherLimit
// are read for the files they name, and at most maxNamed files named by a
// command line or a launcher are stamped.
const (
	hashLimit     = 1 << 20
	launcherLimit = 64 << 10
	maxNamed      = 16
)

// interpreters run a script named by an argument: the script is the
// server's code as much as the interpreter is.
var interpreters = regexp.MustCompile(`^(node|nodejs|bun|deno|python[0-9.]*|pypy[0-9.]*|ruby|perl|php|sh|bash|dash|zsh|java)$`)

// shells run a command line (-c) or a launcher script whose words name the
// server's files.
var shells = regexp.MustCompile(`^(sh|bash|dash|zsh)$`)

// pythons run a module (-m NAME) found first in the working directory.
var pythons = regexp.MustCompile(`^(python[0-9.]*|pypy[0-9.]*)$`)

// runners fetch and run a package named by their first argument that is
// not a flag.
var runners = map[string]bool{"npx": true, "bunx": true, "pnpx": true, "uvx": true, "pipx": true}

// runnerValueFlags take a value (skipped when looking for the package).
var runnerValueFlags = map[string]bool{"-p": true, "--package": true, "--from": true, "--python": true, "--with": true, "-c": true, "--call": true}

// Identify computes the identity of a command run in dir.
func Identify(command string, args []string, dir string) Identity {
	id := Identity{Command: command, Args: slices.Clone(args)}
	seen := map[string]bool{}
	abs := func(p string) string {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return filepath.Clean(p)
	}
	// stamp stamps the regular file p (and the file a link there names);
	// it reports whether there was one.
	stamp := func(p string) bool {
		p = abs(p)
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			return false
		}
		if !seen[p] {
			seen[p] = true
			id.Files = append(id.Files, stampOf(p, fi))
		}
		if real, err := filepath.EvalSymlinks(p); err == nil && real != p && !seen[real] {
			if fi, err := os.Stat(real); err == nil && fi.Mode().IsRegular() {
				seen[real] = true
				id.Files = append(id.Files, stampOf(real, fi))
			}
		}
		return true
	}
	named := 0
	// stampNamed stamps the files the words of a command line or a
	// launcher script name, one level deep.
	stampNamed := func(text string) {
		for _, w := range strings.Fields(text) {
			w = strings.Trim(w, `"';&|()`)
			if w == "" || strings.HasPrefix(w, "-") || strings.ContainsAny(w, "$`*?=") || named >= maxNamed {
				continue
			}
			if stamp(w) {
				named++
			}
		}
	}
	if stamp(command) {
		if text, ok := launcherText(abs(command)); ok {
			stampNamed(text) // a script run as the command: what it runs
		}
	}
	base := filepath.Base(command)
	switch {
	case interpreters.MatchString(base):
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-c" && shells.MatchString(base) && i+1 < len(args):
				stampNamed(args[i+1])
				i++
				continue
			case a == "-m" && pythons.MatchString(base) && i+1 < len(args):
				stampModule(args[i+1], dir, stamp)
				i++
				continue
			case strings.HasPrefix(a, "-"):
				continue
			}
			if stamp(a) {
				if shells.MatchString(base) {
					if text, ok := launcherText(abs(a)); ok {
						stampNamed(text)
					}
				}
				break
			}
		}
	case runners[base]:
		id.Package, id.Pinned = runnerPackage(base, args)
	}
	return id
}

// stampOf stamps the regular file p described by fi, hashing it when it
// is small. The file is opened as pkg/safefile opens what a client names
// (never blocking on what was swapped for a FIFO).
func stampOf(p string, fi os.FileInfo) Stamp {
	st := Stamp{Path: p, Size: fi.Size(), ModTime: fi.ModTime().UTC()}
	if fi.Size() <= hashLimit {
		if f, err := safefile.Open(p); err == nil {
			h := sha256.New()
			if _, err := io.Copy(h, io.LimitReader(f, hashLimit+1)); err == nil {
				st.SHA256 = hex.EncodeToString(h.Sum(nil))
			}
			f.Close()
		}
	}
	return st
}

// launcherText is the text of p when it is a script (it begins "#!") of at
// most launcherLimit bytes: the files its words name are the server's code
// as much as it is.
func launcherText(p string) (string, bool) {
	f, err := safefile.Open(p)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, launcherLimit+1))
	if err != nil || len(b) > launcherLimit || !strings.HasPrefix(string(b), "#!") {
		return "", false
	}
	return string(b), true
}

// stampModule stamps what `python -m NAME` runs when the working
// directory holds it (the first place Python looks): NAME.py, or the
// package's __main__.py and __init__.py. A module installed elsewhere is
// not seen.
func stampModule(name, dir string, stamp func(string) bool) {
	rel := filepath.Join(strings.Split(name, ".")...)
	if stamp(filepath.Join(dir, rel+".py")) {
		return
	}
	stamp(filepath.Join(dir, rel, "__main__.py"))
	stamp(filepath.Join(dir, rel, "__init__.py"))
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
			return x.Path == y.Path && x.Size == y.Size && x.ModTime.Equal(y.ModTime) && x.SHA256 == y.SHA256
		})
}
