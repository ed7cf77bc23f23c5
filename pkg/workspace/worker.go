package workspace

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hearth-mcp/hearth/pkg/workspace/index"
)

// WorkerCommand is the hearthd subcommand that builds an index.
const WorkerCommand = "index-worker"

// workerLine is one line the worker writes on stdout: progress while it
// works, then the result.
type workerLine struct {
	Done   int         `json:"done"`
	Total  int         `json:"total"`
	Result *index.Meta `json:"result,omitempty"`
}

// RunWorker is `hearthd index-worker`: it reads the repository-relative paths
// to index from stdin (NUL-separated), builds the index file and reports
// progress and the result as JSON lines on stdout. The daemon runs it under
// the supervisor, so a runaway or crashing build is contained and killed as
// a process tree. It returns the process exit code.
func RunWorker(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(WorkerCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("repo", "", "repository root (absolute)")
	out := fs.String("out", "", "index file to write")
	head := fs.String("head", "", "git HEAD at the build")
	source := fs.String("source", "walk", "how the file list was made: git or walk")
	incremental := fs.Bool("incremental", true, "take unchanged files from the existing index")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if !filepath.IsAbs(*repo) || !filepath.IsAbs(*out) {
		fmt.Fprintln(stderr, "index-worker: --repo and --out must be absolute paths")
		return 2
	}
	// SIGTERM (cancel, timeout) stops the build between files; the temporary
	// file is removed and the previous index stays.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	var entries []index.Entry
	r := bufio.NewReaderSize(stdin, 1<<16)
	for {
		rel, err := r.ReadString(0)
		rel = strings.TrimSuffix(rel, "\x00")
		if rel != "" {
			if !localPath(rel) {
				fmt.Fprintf(stderr, "index-worker: refusing path %q: not inside the repository\n", rel)
				return 2
			}
			entries = append(entries, index.Entry{Rel: rel})
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(stderr, "index-worker: reading the file list:", err)
			return 1
		}
	}
	// Every file is read inside the repository: a directory that leads out
	// of it through a symbolic link is refused, not followed.
	root, err := os.OpenRoot(*repo)
	if err != nil {
		fmt.Fprintln(stderr, "index-worker: opening the repository:", err)
		return 1
	}
	defer root.Close()
	var prev *index.Index
	if *incremental {
		if ix, err := index.Open(*out); err == nil && ix.Meta().Repo == *repo {
			prev = ix
			defer ix.Close()
		} else if ix != nil {
			ix.Close()
		}
	}
	enc := json.NewEncoder(stdout)
	meta, err := index.Build(ctx, *out, index.Meta{Repo: *repo, Head: *head, Source: *source}, root, entries, prev,
		func(done, total int) { enc.Encode(workerLine{Done: done, Total: total}) })
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "index-worker: stopped by a signal; the previous index is unchanged")
			return 130
		}
		fmt.Fprintln(stderr, "index-worker:", err)
		return 1
	}
	if err := enc.Encode(workerLine{Done: len(entries), Total: len(entries), Result: &meta}); err != nil {
		fmt.Fprintln(stderr, "index-worker: writing the result:", err)
		return 1
	}
	return 0
}

// localPath reports whether a slash path stays inside its root: relative, no
// "..", no NUL.
func localPath(rel string) bool {
	return rel != "" && !strings.ContainsRune(rel, 0) && filepath.IsLocal(filepath.FromSlash(rel))
}
