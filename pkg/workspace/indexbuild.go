package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/supervisor"
	"github.com/hearth-mcp/hearth/pkg/tool"
	"github.com/hearth-mcp/hearth/pkg/workspace/index"
)

type buildArgs struct {
	RepoPath    string `json:"repo_path"`
	Incremental *bool  `json:"incremental"`
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

func (f *Family) indexBuild(ctx context.Context, call *tool.Call) (any, error) {
	var a buildArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	incremental := a.Incremental == nil || *a.Incremental
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
	args := append(f.worker[1:len(f.worker):len(f.worker)],
		"--repo", root, "--out", out, "--head", head, "--source", lst.source,
		"--incremental="+strconv.FormatBool(incremental))

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
		if te, ok := tool.AsError(err); ok {
			return nil, te
		}
		return nil, tool.Errorf(tool.Internal, "cannot start the index worker: %v", err)
	}
	if res.Killed || ctx.Err() != nil {
		// A worker killed after its grace period leaves its temporary file.
		f.removeTemps(out)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if res.ExitCode != 0 || meta == nil {
		f.removeTemps(out)
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
	return r, nil
}

func describeExit(r supervisor.Result) string {
	if r.Signal != "" {
		return "killed by " + r.Signal
	}
	if r.ExitCode == 0 {
		return "it exited without reporting a result"
	}
	return fmt.Sprintf("exit status %d", r.ExitCode)
}

// removeTemps deletes temporary files a killed worker left beside out. The
// caller holds the repository's build lock, so none belongs to a live build.
func (f *Family) removeTemps(out string) {
	tmps, _ := filepath.Glob(out + ".tmp-*")
	for _, t := range tmps {
		os.Remove(t)
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
