package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/supervisor"
	"github.com/hearth-mcp/hearth/pkg/tool"
	"github.com/hearth-mcp/hearth/pkg/workspace/index"
)

type buildArgs struct {
	RepoPath    string `json:"repo_path,omitempty"`
	Incremental bool   `json:"incremental,omitempty"` // the binder fills in its default, true
	// TimeoutMS is the call's time limit, which the registry applies (the
	// tool's TimeoutArg): the handler sees it as its context's deadline.
	TimeoutMS *int `json:"timeout_ms,omitempty"`
}

type buildResult struct {
	Repo        string    `json:"repo"`
	IndexPath   string    `json:"index_path"`
	Files       int       `json:"files"`
	Bytes       int64     `json:"bytes"`
	Skipped     int       `json:"skipped"`
	Reused      int       `json:"reused"`
	Listed      int       `json:"listed"`
	Source      string    `json:"source"`
	Head        *string   `json:"head"`
	Incremental bool      `json:"incremental"`
	DurationMs  int64     `json:"duration_ms"`
	BuiltAt     time.Time `json:"built_at"`
}

func (f *Family) indexBuild(ctx context.Context, call *tool.Call, a buildArgs) (*buildResult, error) {
	incremental := a.Incremental
	root, err := f.root(a.RepoPath, call.Client)
	if err != nil {
		return nil, err
	}
	if f.dirErr != nil {
		return nil, tool.Errorf(tool.Internal, "the index directory is not usable: %v", f.dirErr).
			With("hint", "check that $HEARTH_HOME is writable (check_status shows it)")
	}
	unlock, err := f.lockBuild(ctx, root)
	if err != nil {
		return nil, err
	}
	defer unlock()

	start := time.Now()
	lst, err := f.listFiles(ctx, root)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if te, ok := tool.AsError(err); ok {
			return nil, te
		}
		return nil, tool.Errorf(tool.Internal, "cannot list the files of %s: %v", root, err)
	}
	head := ""
	if lst.source == "git" {
		head = f.head(ctx, root)
	}
	var stdin bytes.Buffer
	for _, p := range lst.paths {
		stdin.WriteString(p)
		stdin.WriteByte(0)
	}
	out := f.indexPath(root)
	// While the worker runs, its temporary file is not stale; once it is
	// done (success, failure, cancel or timeout), every temporary file left
	// in the directory that no other build is writing is, this build's too.
	finished := f.buildRunning(out)
	defer func() {
		finished()
		f.removeStaleTemps()
	}()
	job := WorkerJob{Repo: root, Out: out, Head: head, Source: lst.source, Incremental: incremental}
	args := append(f.worker[1:len(f.worker):len(f.worker)], job.Args()...)

	var meta *index.Meta
	last := -1
	res, err := f.sup.Run(ctx, supervisor.Spec{
		Path:  f.worker[0],
		Args:  args,
		Dir:   f.dir,
		Stdin: &stdin,
		// The worker stops between files on SIGTERM; the grace covers the
		// rest of a file and the removal of its temporary file.
		OnLine: func(line []byte) {
			var l workerLine
			if json.Unmarshal(line, &l) != nil {
				return
			}
			if l.Result != nil {
				meta = l.Result
				return
			}
			if l.Done > last { // progress must strictly increase
				last = l.Done
				call.Progress(float64(l.Done), float64(l.Total), fmt.Sprintf("indexed %d of %d files", l.Done, l.Total))
			}
		},
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if te := f.notStarted(err); te != nil {
			return nil, te
		}
		return nil, tool.Errorf(tool.Internal, "cannot start the index worker: %v", err)
	}
	// A worker killed after its grace period leaves its temporary file: the
	// deferred sweep removes it.
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if res.ExitCode != 0 || meta == nil {
		f.log.Warn("index worker failed", zap.String("repo", root), zap.Int("exit", res.ExitCode),
			zap.String("signal", res.Signal), zap.String("stderr", res.Stderr))
		e := tool.Errorf(tool.Internal, "the index worker failed (%s); the previous index, if any, is unchanged", describeExit(res))
		if res.Stderr != "" {
			e = e.With("stderr", lastLines(res.Stderr, 20))
		}
		return nil, e
	}
	r := buildResult{
		Repo: root, IndexPath: out, Files: meta.Files, Bytes: meta.Bytes, Skipped: meta.Skipped,
		Reused: meta.Reused, Listed: len(lst.paths), Source: meta.Source, Incremental: incremental,
		DurationMs: time.Since(start).Milliseconds(), BuiltAt: meta.BuiltAt,
	}
	if meta.Head != "" {
		r.Head = &meta.Head
	}
	return &r, nil
}

func describeExit(r supervisor.Result) string {
	if r.KillReason == "output" {
		return fmt.Sprintf("it printed more than %d MiB and was stopped", supervisor.DefaultLineBytes>>20)
	}
	if r.Signal != "" {
		return "killed by " + r.Signal
	}
	if r.ExitCode == 0 {
		return "it exited without reporting a result"
	}
	return fmt.Sprintf("exit status %d", r.ExitCode)
}

// tempInfix separates an index file's name from the random part of its
// temporary file's name (index.Build: <hash>.idx.tmp-<random>).
const tempInfix = ".tmp-"

// buildRunning records that a build is writing the index file out, so its
// temporary file is not stale; the returned function records its end.
func (f *Family) buildRunning(out string) (finished func()) {
	f.mu.Lock()
	f.running[out]++
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		if f.running[out]--; f.running[out] <= 0 {
			delete(f.running, out)
		}
		f.mu.Unlock()
	}
}

// staleTemp is a temporary index file no running build is writing.
type staleTemp struct {
	path string
	size int64
}

// staleTemps lists the temporary index files in the index directory that no
// build of this daemon is writing now. The daemon is the only owner of its
// data directory, so any other one was left by a build that died. The
// directory is read before the running builds are, so a build that starts
// meanwhile cannot have its new file listed.
func (f *Family) staleTemps() (stale []staleTemp, total int64) {
	if f.dir == "" || f.dirErr != nil {
		return nil, 0
	}
	paths, _ := filepath.Glob(filepath.Join(f.dir, "*.idx"+tempInfix+"*"))
	if len(paths) == 0 {
		return nil, 0
	}
	f.mu.Lock()
	for _, p := range paths {
		name := filepath.Base(p)
		owner := filepath.Join(f.dir, name[:strings.Index(name, ".idx"+tempInfix)+len(".idx")])
		if f.running[owner] == 0 {
			stale = append(stale, staleTemp{path: p})
		}
	}
	f.mu.Unlock()
	kept := stale[:0]
	for _, t := range stale {
		st, err := os.Lstat(t.path)
		if err != nil || !st.Mode().IsRegular() {
			continue // gone since (renamed by its build), or not ours
		}
		t.size = st.Size()
		total += t.size
		kept = append(kept, t)
	}
	return kept, total
}

// removeStaleTemps deletes the stale temporary index files and logs what it
// removed.
func (f *Family) removeStaleTemps() {
	stale, _ := f.staleTemps()
	var n int
	var size int64
	for _, t := range stale {
		if err := os.Remove(t.path); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				f.log.Warn("cannot remove a stale temporary index file", zap.String("path", t.path), zap.Error(err))
			}
			continue
		}
		n++
		size += t.size
	}
	if n > 0 {
		f.log.Info("removed stale temporary index files", zap.String("dir", f.dir), zap.Int("files", n), zap.Int64("bytes", size))
	}
}

// head returns the commit HEAD names, or "" (no commits yet, not git).
func (f *Family) head(ctx context.Context, root string) string {
	lines, err := f.git(ctx, root, "rev-parse", "--verify", "-q", "HEAD")
	if err != nil || len(lines) == 0 {
		return ""
	}
	return lines[0]
}
