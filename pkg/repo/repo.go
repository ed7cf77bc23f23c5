// Package repo finds the repository a tool call is about (shared by the
// clarification and workspace families): the call's repo_path when it
// gives one, else the client's directory walked up to the first directory
// holding .git.
//
// The client's directory is the first of the client's MCP roots (the
// workspace it declares: an editor may start its servers anywhere), else the
// shim's $/hearth/hello cwd, else (for a stdio daemon, which the client
// started) the one the daemon layer recorded at start. The socket daemon's
// own working directory is never used: it is not the user's.
package repo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// ErrNotFound is wrapped by every failure to find a repository.
var ErrNotFound = errors.New("no git repository found")

// Error says why no repository was found, with what was tried.
type Error struct {
	// Path is the directory or repo_path that was tried ("" when the client's
	// directory is unknown).
	Path string
	// Reason is a one-line explanation for the client.
	Reason string
	// Explicit is true when Path came from the call's repo_path.
	Explicit bool
	err      error
}

func (e *Error) Error() string { return e.Reason }
func (e *Error) Unwrap() error { return ErrNotFound }

// Find returns the absolute, symlink-free root of the repository for a call.
// cwd and roots describe the client: its working directory ("" when
// unknown) and its declared MCP roots as file paths (see ClientDir).
//
// An explicit repoPath must name an existing directory; a relative one is
// resolved against the client's directory. Like git, a directory inside a
// repository stands for that repository: it is walked up to the work
// tree's root. A directory in no repository is returned as it is (the
// workspace tools index plain directories too; FindRepository refuses
// them). Without repoPath, the client's directory is walked up to the first
// directory holding .git (a directory or, for worktrees and submodules, a
// file).
func Find(repoPath, cwd string, roots []string) (string, error) {
	dir, err := resolve(repoPath, cwd, roots)
	if err != nil || repoPath == "" {
		return dir, err
	}
	if root, ok := WalkUp(dir); ok {
		return root, nil
	}
	return dir, nil
}

// FindRepository is Find for callers that need a git repository: an
// explicit repoPath in no repository is an *Error, as a client directory in
// none is.
func FindRepository(repoPath, cwd string, roots []string) (string, error) {
	dir, err := resolve(repoPath, cwd, roots)
	if err != nil || repoPath == "" {
		return dir, err
	}
	root, ok := WalkUp(dir)
	if !ok {
		return "", &Error{Path: repoPath, Explicit: true, Reason: fmt.Sprintf("repo_path %s is not inside a git repository (no .git at or above %s)", repoPath, dir)}
	}
	return root, nil
}

// resolve resolves repoPath (or, without it, the repository around the
// client's directory).
func resolve(repoPath, cwd string, roots []string) (string, error) {
	start := ClientDir(cwd, roots)
	if repoPath != "" {
		if strings.ContainsRune(repoPath, 0) {
			return "", &Error{Path: repoPath, Explicit: true, Reason: "repo_path contains a NUL byte"}
		}
		p := repoPath
		if !filepath.IsAbs(p) {
			if start == "" {
				return "", &Error{Path: repoPath, Explicit: true, Reason: fmt.Sprintf("repo_path %q is relative and the client's directory is unknown: give an absolute path", repoPath)}
			}
			p = filepath.Join(start, p)
		}
		dir, err := realDir(p)
		if err != nil {
			return "", &Error{Path: repoPath, Explicit: true, Reason: fmt.Sprintf("repo_path %s: %s", repoPath, err), err: err}
		}
		return dir, nil
	}
	if start == "" {
		return "", &Error{Reason: "the client's working directory is unknown (connect through the hearth shim, declare MCP roots, or give repo_path)"}
	}
	dir, err := realDir(start)
	if err != nil {
		return "", &Error{Path: start, Reason: fmt.Sprintf("the client's directory %s: %s", start, err), err: err}
	}
	root, ok := WalkUp(dir)
	if !ok {
		return "", &Error{Path: start, Reason: fmt.Sprintf("no git repository found at or above %s", start)}
	}
	return root, nil
}

// NeedsRoots reports whether a call of a tool that takes repo_path still
// needs the client's roots to find its repository: its arguments name none
// (repo_path absent or empty) and no repository is found at or above the
// client's working directory cwd. It is the tool.Tool.NeedsRoots of those
// tools.
func NeedsRoots(args *jsonval.Doc, cwd string) bool {
	if args != nil && args.Root().Kind() == jsonval.Object {
		if p := args.Get(args.Root(), "repo_path"); p != nil && p.Kind() == jsonval.String && args.Str(p) != "" {
			return false
		}
	}
	_, err := Find("", cwd, nil)
	return err != nil
}

// ClientDir is the client's directory as far as the daemon knows it, or ""
// when it does not: the first absolute path among the client's roots, else
// its working directory cwd when that is absolute.
func ClientDir(cwd string, roots []string) string {
	for _, r := range roots {
		if filepath.IsAbs(r) {
			return filepath.Clean(r)
		}
	}
	if filepath.IsAbs(cwd) {
		return filepath.Clean(cwd)
	}
	return ""
}

// WalkUp returns the first directory at or above dir that holds .git.
func WalkUp(dir string) (string, bool) {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// realDir resolves p to an absolute path without symlinks and checks that it
// is a directory, with an error a user can act on.
func realDir(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", errors.New("no such directory")
		}
		return "", reason(err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", reason(err)
	}
	if !fi.IsDir() {
		return "", errors.New("not a directory")
	}
	return real, nil
}

// reason strips the path an *os.PathError repeats, keeping the OS's words.
func reason(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
