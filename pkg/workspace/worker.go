package workspace

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/workspace/index"
)

// WorkerCommand is the hearthd subcommand that builds an index.
const WorkerCommand = "index-worker"

// WorkerJob is one index build as index_build hands it to the worker
// process: the flags of `hearthd index-worker`. The daemon runs the build in
// a child process under the supervisor, so a runaway or crashing build is
// contained and killed as a process tree.
type WorkerJob struct {
	Repo        string // repository root (absolute)
	Out         string // index file to write (absolute)
	Head        string // git HEAD at the build, "" without git
	Source      string // how the file list was made: "git" or "walk"
	Incremental bool   // take unchanged files from the existing index
}

// Args is the job as the worker's flags, in the form hearthd's index-worker
// subcommand parses.
func (j WorkerJob) Args() []string {
	return []string{"--repo", j.Repo, "--out", j.Out, "--head", j.Head, "--source", j.Source,
		"--incremental=" + strconv.FormatBool(j.Incremental)}
}

// ErrBadJob marks a job the worker refuses before reading any file: a
// relative repository or output, or a listed path outside the repository.
var ErrBadJob = errors.New("bad index job")

// workerLine is one line the worker writes on stdout: progress while it
// works, then the result.
type workerLine struct {
	Done   int         `json:"done"`
	Total  int         `json:"total"`
	Result *index.Meta `json:"result,omitempty"`
}

// RunWorkerJob is the worker's work: it reads the repository-relative paths
// to index from list (NUL-separated), builds the index file and writes
// progress and then the result as JSON lines to out. When ctx ends (the
// worker's SIGTERM: cancel, timeout) it stops between files, the temporary
// file is removed and the previous index stays; the error is then
// context.Canceled.
func RunWorkerJob(ctx context.Context, job WorkerJob, list io.Reader, out io.Writer) error {
	if !filepath.IsAbs(job.Repo) || !filepath.IsAbs(job.Out) {
		return fmt.Errorf("%w: the repository and the output must be absolute paths", ErrBadJob)
	}
	entries, err := readWorkList(list)
	if err != nil {
		return err
	}
	// Every file is read inside the repository: a directory that leads out
	// of it through a symbolic link is refused, not followed.
	root, err := os.OpenRoot(job.Repo)
	if err != nil {
		return fmt.Errorf("opening the repository: %w", err)
	}
	defer root.Close()
	var prev *index.Index
	if job.Incremental {
		if ix, err := index.Open(job.Out); err == nil && ix.Meta().Repo == job.Repo {
			prev = ix
			defer ix.Close()
		} else if ix != nil {
			ix.Close()
		}
	}
	enc := json.NewEncoder(out)
	meta, err := index.Build(ctx, job.Out, index.Meta{Repo: job.Repo, Head: job.Head, Source: job.Source}, root, entries, prev,
		func(done, total int) { enc.Encode(workerLine{Done: done, Total: total}) })
	if err != nil {
		return err
	}
	if err := enc.Encode(workerLine{Done: len(entries), Total: len(entries), Result: &meta}); err != nil {
		return fmt.Errorf("writing the result: %w", err)
	}
	return nil
}

// readWorkList reads the NUL-separated file list, refusing a path that
// leaves the repository.
func readWorkList(list io.Reader) ([]index.Entry, error) {
	var entries []index.Entry
	r := bufio.NewReaderSize(list, 1<<16)
	for {
		rel, err := r.ReadString(0)
		rel = strings.TrimSuffix(rel, "\x00")
		if rel != "" {
			if !localPath(rel) {
				return nil, fmt.Errorf("%w: refusing path %q: not inside the repository", ErrBadJob, rel)
			}
			entries = append(entries, index.Entry{Rel: rel})
		}
		if err == io.EOF {
			return entries, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the file list: %w", err)
		}
	}
}

// localPath reports whether a slash path stays inside its root: relative, no
// "..", no NUL.
func localPath(rel string) bool {
	return rel != "" && !strings.ContainsRune(rel, 0) && filepath.IsLocal(filepath.FromSlash(rel))
}
