// Package upgrade notices that a newer hearthd was installed in place of the
// running daemon's executable, so that the daemon hands over to it by
// itself (docs/decisions/0050-upgrade-handover.md). It records the file's
// identity at start, and on each check looks at the path again: a file of
// another identity that is safe to run and says it is a hearthd of another
// version is named once; whatever it is, it is not looked at again until
// the path changes once more. It starts no process itself: the caller's
// Probe runs the file's `version`.
package upgrade

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// Identity is what tells one file at a path from another: device and
// inode, size and modification time.
type Identity struct {
	Dev, Ino uint64
	Size     int64
	ModTime  time.Time
}

// Probe runs path's `version` (with a timeout) and returns what it printed.
type Probe func(path string) (string, error)

// Watch watches one executable's path.
type Watch struct {
	path    string
	version string // this daemon's (version.Tooling)
	probe   Probe

	mu   sync.Mutex
	seen map[Identity]bool // identities looked at: each is judged once
}

// NewWatch records the identity of the file at path (the daemon's
// executable as it starts) and its version. running names the file the
// daemon runs, where the system can say even after the path was given
// another file (Linux: /proc/self/exe), else the path: a file installed at
// the path while the daemon started, after it was executed and before this
// call, is then news, not taken for the daemon's own.
func NewWatch(path, running, version string, probe Probe) (*Watch, error) {
	id, _, err := stat(running)
	if err != nil {
		return nil, err
	}
	return &Watch{path: path, version: version, probe: probe, seen: map[Identity]bool{id: true}}, nil
}

// Path is the executable's path as recorded.
func (w *Watch) Path() string { return w.path }

// Check looks at the path. It returns the path when it now holds a newer
// hearthd to hand over to: another file, regular, owned by this user or
// root, writable by no one else, whose `version` names hearthd and another
// version than this daemon's. It returns "" and no error when the file
// there was judged already (each identity is judged once: a successor that
// failed is not tried again until another file is installed); an error
// says why the new file is not one to run.
func (w *Watch) Check() (string, error) {
	id, info, err := stat(w.path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", w.path, err) // removed, or half-renamed: looked at again next time
	}
	w.mu.Lock()
	if w.seen[id] {
		w.mu.Unlock()
		return "", nil
	}
	w.seen[id] = true
	w.mu.Unlock()
	if err := safe(info); err != nil {
		return "", fmt.Errorf("%s: %w", w.path, err)
	}
	if err := safePlace(w.path); err != nil {
		return "", fmt.Errorf("%s: %w", w.path, err)
	}
	out, err := w.probe(w.path)
	if err != nil {
		return "", fmt.Errorf("%s version: %w", w.path, err)
	}
	name, ver, _ := strings.Cut(strings.TrimSpace(out), " ")
	switch {
	case name != "hearthd" || ver == "":
		return "", fmt.Errorf("%s version printed %q, not a hearthd's version", w.path, firstLine(out))
	case ver == w.version:
		return "", fmt.Errorf("%s is this daemon's version (%s) again", w.path, ver)
	}
	// Installed while this check ran: judged next time.
	if now, _, err := stat(w.path); err != nil || now != id {
		w.mu.Lock()
		delete(w.seen, id)
		w.mu.Unlock()
		return "", fmt.Errorf("%s changed while it was checked", w.path)
	}
	return w.path, nil
}

// Runnable judges the file at path as a successor to run: regular,
// executable, owned by this user or root, writable by no one else, in
// directories only they may change (the rule Check applies to a new file
// before its `version` runs). A hand-over runs nothing it does not pass.
func Runnable(path string) error {
	_, info, err := stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := safe(info); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := safePlace(path); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// stat identifies the file at path where the system can (stat_unix.go sets
// it); elsewhere a daemon hands over only on Unix (decision 0046).
var stat = func(string) (Identity, os.FileInfo, error) { return Identity{}, nil, errUnsupported }

// safe checks that only the user and root can change the file (stat_unix.go
// sets it).
var safe = func(os.FileInfo) error { return errUnsupported }

// safePlace checks the same of the directories above path (stat_unix.go sets
// it).
var safePlace = func(string) error { return errUnsupported }

// errUnsupported: a daemon hands over only on Unix (decision 0046).
var errUnsupported = errors.New("an upgrade hands over only on Unix")
