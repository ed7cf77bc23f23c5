package workspace

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/safefile"
	"github.com/hearth-mcp/hearth/pkg/tool"
	"github.com/hearth-mcp/hearth/pkg/workspace/index"
)

// changeExamples is how many paths of each kind of change are listed.
const changeExamples = 10

type changes struct {
	Modified int      `json:"modified"`
	Added    int      `json:"added"`
	Deleted  int      `json:"deleted"`
	Examples examples `json:"examples"`
}

type examples struct {
	Modified []string `json:"modified"`
	Added    []string `json:"added"`
	Deleted  []string `json:"deleted"`
}

type indexStatusResult struct {
	Repo      string     `json:"repo"`
	Exists    bool       `json:"exists"`
	IndexPath string     `json:"index_path"`
	Damaged   string     `json:"damaged,omitempty"` // why the file cannot be read; rebuild it
	BuiltAt   *time.Time `json:"built_at"`
	Files     int        `json:"files"`
	Bytes     int64      `json:"bytes"`
	Skipped   int        `json:"skipped"`
	SizeBytes int64      `json:"size_bytes"` // the index file itself
	Source    string     `json:"source,omitempty"`
	Head      *string    `json:"head"`         // HEAD at build
	Current   *string    `json:"current_head"` // HEAD now
	Changed   *changes   `json:"changed_since"`
}

// repoArgs are the arguments of a tool whose only argument is repo_path.
type repoArgs struct {
	RepoPath string `json:"repo_path,omitempty"`
}

func (f *Family) indexStatus(ctx context.Context, call *tool.Call, a repoArgs) (*indexStatusResult, error) {
	root, err := f.root(a.RepoPath, call.Client)
	if err != nil {
		return nil, err
	}
	r := indexStatusResult{Repo: root, IndexPath: f.indexPath(root)}
	h, err := f.acquire(root)
	if errors.Is(err, errNoIndexFile) {
		return &r, nil
	}
	if err != nil {
		if !errors.Is(err, index.ErrCorrupt) {
			return nil, f.noIndex(root, err)
		}
		r.Exists, r.Damaged = true, err.Error()
		return &r, nil
	}
	defer f.release(h)
	m := h.ix.Meta()
	r.Exists, r.BuiltAt, r.Files, r.Bytes, r.Skipped, r.SizeBytes, r.Source =
		true, &m.BuiltAt, m.Files, m.Bytes, m.Skipped, h.ix.Size(), m.Source
	if m.Head != "" {
		r.Head = &m.Head
	}
	lst, err := f.listFiles(ctx, root)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, tool.Errorf(tool.Internal, "cannot list the files of %s: %v", root, err)
	}
	if lst.source == "git" {
		if head := f.head(ctx, root); head != "" {
			r.Current = &head
		}
	}
	c, err := diffIndex(ctx, h.ix, root, lst.paths)
	if err != nil {
		return nil, err
	}
	r.Changed = &c
	return &r, nil
}

// diffIndex compares an index with the files listed now: deleted (indexed,
// no longer listed or gone), modified (size or modification time differ)
// and added (listed, not indexed, and a file the indexer would take). Files
// are looked at inside the repository, as the indexer reads them: one behind
// a directory leading out of it is gone.
func diffIndex(ctx context.Context, ix *index.Index, root string, listed []string) (changes, error) {
	c := changes{Examples: examples{Modified: []string{}, Added: []string{}, Deleted: []string{}}}
	repo, err := os.OpenRoot(root)
	if err != nil {
		return c, tool.Errorf(tool.Internal, "cannot open the repository %s: %v", root, err)
	}
	defer repo.Close()
	dirs := safefile.NewDirs(repo) // both lists are in path order
	defer dirs.Close()
	note := func(n *int, list *[]string, p string) {
		if *n++; len(*list) < changeExamples {
			*list = append(*list, p)
		}
	}
	now := make(map[string]bool, len(listed))
	for _, p := range listed {
		now[p] = true
	}
	indexed := make(map[string]bool, ix.Len())
	for i := 0; i < ix.Len(); i++ {
		if i&1023 == 0 && ctx.Err() != nil {
			return c, ctx.Err()
		}
		fi := ix.File(i)
		indexed[fi.Path] = true
		if !now[fi.Path] {
			note(&c.Deleted, &c.Examples.Deleted, fi.Path)
			continue
		}
		st, err := dirs.Lstat(fi.Path)
		switch {
		case err != nil || !st.Mode().IsRegular():
			note(&c.Deleted, &c.Examples.Deleted, fi.Path)
		case st.Size() != fi.Size || st.ModTime().UnixNano() != fi.MTime:
			note(&c.Modified, &c.Examples.Modified, fi.Path)
		}
	}
	for i, p := range listed {
		if i&1023 == 0 && ctx.Err() != nil {
			return c, ctx.Err()
		}
		if !indexed[p] && indexable(dirs, p) {
			note(&c.Added, &c.Examples.Added, p)
		}
	}
	return c, nil
}

// indexable reports whether the indexer would take a file: regular, inside
// the repository, at most index.MaxFileSize, not binary.
func indexable(dirs *safefile.Dirs, name string) bool {
	fh, err := dirs.OpenNoFollow(name)
	if err != nil {
		return false
	}
	defer fh.Close()
	if st, err := fh.Stat(); err != nil || st.Size() > index.MaxFileSize {
		return false
	}
	buf := make([]byte, binarySniff)
	n, _ := fh.Read(buf)
	return bytes.IndexByte(buf[:n], 0) < 0
}

type checkStatusResult struct {
	Git      gitCapability   `json:"git"`
	Index    indexCapability `json:"index"`
	Children childrenStatus  `json:"children"`
	Limits   limits          `json:"limits"`
	Worker   string          `json:"worker"`
}

type gitCapability struct {
	Present bool   `json:"present"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

type indexCapability struct {
	Dir      string `json:"dir"`
	Writable bool   `json:"writable"`
	Error    string `json:"error,omitempty"`
	Indexes  int    `json:"indexes"`
	Bytes    int64  `json:"bytes"`
	Damaged  int    `json:"damaged"`
	// Temporary index files no running build is writing: left by a daemon
	// or worker killed mid-build. Counted, never removed here; the family
	// removes them when it opens and after each build.
	StaleTempFiles int   `json:"stale_temp_files"`
	StaleTempBytes int64 `json:"stale_temp_bytes"`
}

type childrenStatus struct {
	Live    int   `json:"live"`
	Max     int   `json:"max"`
	GraceMs int64 `json:"grace_ms"`
}

type limits struct {
	MaxFileBytes       int   `json:"max_file_bytes"`
	ShowFileMaxBytes   int   `json:"show_file_max_bytes"`
	SearchLimitMax     int   `json:"search_limit_max"`
	ContextLinesMax    int   `json:"context_lines_max"`
	BuildTimeoutMs     int64 `json:"index_build_timeout_ms"`
	BuildTimeoutMaxMs  int64 `json:"index_build_timeout_max_ms"`
	GitTimeoutMs       int64 `json:"git_timeout_ms"`
	ProgressPerSecond  int   `json:"progress_per_second_max"`
	SearchQueryMaxChar int   `json:"search_query_max_chars"`
}

func (f *Family) checkStatus(ctx context.Context, call *tool.Call, _ struct{}) (*checkStatusResult, error) {
	r := checkStatusResult{
		Children: childrenStatus{Live: f.sup.Live(), Max: f.sup.MaxChildren(), GraceMs: f.sup.Grace().Milliseconds()},
		Limits: limits{
			MaxFileBytes: index.MaxFileSize, ShowFileMaxBytes: showFileMaxBytes,
			SearchLimitMax: searchLimitMax, ContextLinesMax: contextLinesMax,
			BuildTimeoutMs: buildTimeout.Milliseconds(), BuildTimeoutMaxMs: buildTimeoutMax.Milliseconds(),
			GitTimeoutMs: gitTimeout.Milliseconds(), ProgressPerSecond: 4, SearchQueryMaxChar: 1000,
		},
		Worker: f.worker[0],
	}
	r.Git.Present = f.gitPath != ""
	if r.Git.Present {
		r.Git.Path = f.gitPath
		v, err := f.version(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			r.Git.Error = err.Error()
		}
		r.Git.Version = v
	}
	r.Index.Dir = f.dir
	if f.dirErr != nil {
		r.Index.Error = f.dirErr.Error()
	} else if tmp, err := os.CreateTemp(f.dir, ".probe-*"); err != nil {
		r.Index.Error = err.Error()
	} else {
		tmp.Close()
		os.Remove(tmp.Name())
		r.Index.Writable = true
	}
	if f.dir != "" {
		files, _ := filepath.Glob(filepath.Join(f.dir, "*.idx"))
		for _, p := range files {
			st, err := os.Stat(p)
			if err != nil {
				continue
			}
			r.Index.Indexes++
			r.Index.Bytes += st.Size()
			if ix, err := index.Open(p); err != nil {
				r.Index.Damaged++
			} else {
				ix.Close()
			}
		}
		stale, size := f.staleTemps()
		r.Index.StaleTempFiles, r.Index.StaleTempBytes = len(stale), size
	}
	return &r, nil
}

var gitVersionRe = regexp.MustCompile(`\d+\.\d+(\.\d+)?`)

// version returns git's version, asked once.
func (f *Family) version(ctx context.Context) (string, error) {
	f.gitVersion.Lock()
	defer f.gitVersion.Unlock()
	if f.gitVersion.v != "" {
		return f.gitVersion.v, nil
	}
	lines, err := f.git(ctx, f.dir, "--version")
	if err != nil {
		return "", err
	}
	if len(lines) > 0 {
		f.gitVersion.v = gitVersionRe.FindString(lines[0])
	}
	return f.gitVersion.v, nil
}

type workspaceStatusResult struct {
	Repo  string       `json:"repo"`
	Git   *gitStatus   `json:"git"` // null when git is missing or this is no work tree
	Index indexSummary `json:"index"`
	Note  string       `json:"note,omitempty"`
}

type gitStatus struct {
	Branch     *string `json:"branch"` // null when HEAD is detached
	Head       *string `json:"head"`   // null before the first commit
	Detached   bool    `json:"detached"`
	Upstream   string  `json:"upstream,omitempty"`
	Ahead      int     `json:"ahead"`
	Behind     int     `json:"behind"`
	DirtyFiles int     `json:"dirty_files"` // changed, staged or untracked (not ignored)
}

type indexSummary struct {
	Exists  bool       `json:"exists"`
	BuiltAt *time.Time `json:"built_at"`
	Files   int        `json:"files"`
	Bytes   int64      `json:"bytes"`
	Head    *string    `json:"head"`
	// Stale is true when HEAD moved since the build (git only).
	Stale   bool   `json:"stale"`
	Damaged string `json:"damaged,omitempty"`
}

func (f *Family) workspaceStatus(ctx context.Context, call *tool.Call, a repoArgs) (*workspaceStatusResult, error) {
	root, err := f.root(a.RepoPath, call.Client)
	if err != nil {
		return nil, err
	}
	r := workspaceStatusResult{Repo: root}
	switch {
	case f.gitPath == "":
		r.Note = "git is not installed: no branch, HEAD or dirty count"
	default:
		lines, err := f.git(ctx, root, "status", "--porcelain=v1", "--branch", "--untracked-files=normal")
		switch {
		case err == nil:
			r.Git = parseStatus(lines)
			if head := f.head(ctx, root); head != "" { // porcelain v1 does not give the commit
				r.Git.Head = &head
			}
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default:
			if te, ok := tool.AsError(err); ok {
				return nil, te
			}
			r.Note = "not a git work tree (" + lastLines(err.Error(), 1) + ")"
		}
	}
	h, err := f.acquire(root)
	switch {
	case err == nil:
		m := h.ix.Meta()
		r.Index = indexSummary{Exists: true, BuiltAt: &m.BuiltAt, Files: m.Files, Bytes: m.Bytes}
		if m.Head != "" {
			r.Index.Head = &m.Head
		}
		r.Index.Stale = r.Git != nil && r.Git.Head != nil && m.Head != *r.Git.Head
		f.release(h)
	case errors.Is(err, errNoIndexFile):
	default:
		r.Index = indexSummary{Exists: true, Damaged: err.Error()}
	}
	return &r, nil
}

// parseStatus reads `git status --porcelain=v1 --branch`: a "## " header
// line, then one line per changed path.
func parseStatus(lines []string) *gitStatus {
	s := &gitStatus{}
	for _, l := range lines {
		if !strings.HasPrefix(l, "## ") {
			if l != "" {
				s.DirtyFiles++
			}
			continue
		}
		h := strings.TrimPrefix(l, "## ")
		switch {
		case strings.HasPrefix(h, "HEAD (no branch)"):
			s.Detached = true
			continue
		case strings.HasPrefix(h, "No commits yet on "):
			b := strings.TrimPrefix(h, "No commits yet on ")
			s.Branch = &b
			continue
		case strings.HasPrefix(h, "Initial commit on "):
			b := strings.TrimPrefix(h, "Initial commit on ")
			s.Branch = &b
			continue
		}
		if i := strings.Index(h, " ["); i >= 0 {
			for _, part := range strings.Split(strings.Trim(h[i+2:], "]"), ", ") {
				if n, ok := strings.CutPrefix(part, "ahead "); ok {
					s.Ahead, _ = strconv.Atoi(n)
				} else if n, ok := strings.CutPrefix(part, "behind "); ok {
					s.Behind, _ = strconv.Atoi(n)
				}
			}
			h = h[:i]
		}
		b, up, _ := strings.Cut(h, "...")
		s.Branch, s.Upstream = &b, up
	}
	return s
}
