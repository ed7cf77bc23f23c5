package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/supervisor"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// gitTimeout bounds one git command run for a call, within the call's own
// deadline: git answering slowly (a huge work tree, a network file system)
// must not hold a status call for minutes.
const gitTimeout = 30 * time.Second

// skipDirs are never walked into outside git: version-control metadata and
// dependency trees nobody means to search.
var skipDirs = map[string]bool{".git": true, "node_modules": true, ".hg": true, ".svn": true}

// git runs git through the supervisor in dir and returns its stdout lines.
// A git that exits non-zero is an error carrying its stderr.
func (f *Family) git(ctx context.Context, dir string, args ...string) ([]string, error) {
	if f.gitPath == "" {
		return nil, errNoGit
	}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	var lines []string
	res, err := f.sup.Run(ctx, supervisor.Spec{
		Path: f.gitPath,
		Args: append([]string{"-c", "core.quotepath=off"}, args...),
		Dir:  dir,
		// No pager, no prompt for credentials, no lock taken by git status.
		Env:    append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_PAGER=cat", "LC_ALL=C"),
		OnLine: func(line []byte) { lines = append(lines, string(line)) },
	})
	if err != nil {
		if te := f.notStarted(err); te != nil {
			return nil, te
		}
		return nil, err
	}
	if res.Killed {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if res.KillReason == "output" {
			// What git printed is held here line by line: bounded by the
			// supervisor (Spec.LineBytes), past which git is stopped.
			return nil, fmt.Errorf("git %s printed more than %d MiB, and was stopped", args[0], supervisor.DefaultLineBytes>>20)
		}
		return nil, fmt.Errorf("git %s was stopped", args[0])
	}
	if res.ExitCode != 0 {
		return nil, &gitError{args: args, code: res.ExitCode, stderr: res.Stderr}
	}
	return lines, nil
}

// notStarted maps the supervisor's errors for a child it never started to
// the tool contract's codes: every slot busy until the deadline is
// QUEUE_OVERLOADED, a cancellation while waiting is CANCELLED. It is nil for
// any other error. Handlers check their own ctx first, so a call that ran
// out of time or was cancelled is still answered as such by the protocol
// layer.
func (f *Family) notStarted(err error) *tool.Error {
	switch {
	case errors.Is(err, supervisor.ErrBusy):
		return tool.Errorf(tool.QueueOverloaded, "every one of the %d child slots stayed busy until the call's deadline", f.sup.MaxChildren())
	case errors.Is(err, supervisor.ErrCancelled):
		return tool.Errorf(tool.Cancelled, "the call was cancelled while it waited for a child slot")
	}
	return nil
}

var errNoGit = errors.New("git is not installed (not found in PATH)")

type gitError struct {
	args   []string
	code   int
	stderr string
}

func (e *gitError) Error() string {
	msg := fmt.Sprintf("git %s exited with status %d", strings.Join(e.args, " "), e.code)
	if e.stderr != "" {
		msg += ": " + lastLines(e.stderr, 3)
	}
	return msg
}

// lastLines keeps the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// listing is the set of files a build indexes.
type listing struct {
	paths  []string // repository-relative slash paths
	source string   // "git" or "walk"
}

// listFiles lists the files to index in root: in a git work tree (root or a
// directory inside one), what git tracks plus untracked files it does not
// ignore, relative to root; elsewhere (or without git)
// a walk that skips .git, node_modules and symbolic links. Binary and large
// files are left to the indexer, which reads them anyway.
func (f *Family) listFiles(ctx context.Context, root string) (listing, error) {
	if f.gitPath != "" {
		lines, err := f.git(ctx, root, "ls-files", "--cached", "--others", "--exclude-standard")
		if err == nil {
			paths := make([]string, 0, len(lines))
			for _, l := range lines {
				if p, ok := unquoteGitPath(l); ok {
					paths = append(paths, p)
				}
			}
			return listing{paths: paths, source: "git"}, nil
		}
		if tool.IsContextDone(err) || ctx.Err() != nil {
			return listing{}, ctx.Err()
		}
		if _, overloaded := tool.AsError(err); overloaded {
			return listing{}, err
		}
		// Not a work tree, or git refused it (an unsafe owner, a damaged
		// index): walk it.
		f.log.Sugar().Debugw("git ls-files failed; walking the directory instead", "repo", root, "err", err)
	}
	paths, err := walkFiles(ctx, root)
	return listing{paths: paths, source: "walk"}, err
}

// unquoteGitPath undoes git's C-style quoting of unusual file names
// ("a\tb" with quotes). ok is false for a line that is not a path.
func unquoteGitPath(line string) (string, bool) {
	if line == "" {
		return "", false
	}
	if line[0] != '"' {
		return line, true
	}
	p, err := strconv.Unquote(line)
	if err != nil {
		return "", false
	}
	return p, true
}

// walkFiles lists the regular files under root, as slash paths.
func walkFiles(ctx context.Context, root string) ([]string, error) {
	var paths []string
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if n++; n&255 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable directory is left out, not fatal
		}
		if d.IsDir() {
			if p != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil
		}
		paths = append(paths, filepath.ToSlash(rel))
		return nil
	})
	return paths, err
}
