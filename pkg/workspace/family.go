// Package workspace is hearth's code-workspace family: index_build,
// index_status, search, show_file, check_status and workspace_status.
//
// An index is one file per repository at $HEARTH_HOME/index/<hash>.idx
// (package index: a trigram index with the content beside it). It is built by
// a supervised child, `hearthd index-worker`, so a runaway or crashing build
// is killed as a process tree and never takes the daemon with it; the daemon
// lists the files (git ls-files, through the supervisor, or a directory walk)
// and hands the list to the worker on stdin. The worker writes a temporary
// file and renames it over the old index, so a cancelled or failed build
// leaves the previous index serving. Temporary files that no running build
// is writing (a daemon or worker killed mid-build leaves them) are removed
// when the family opens and after every build; check_status counts them.
// Searches read the index through a memory map shared by every client; a
// rebuilt file is noticed and reopened.
package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/repo"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
	"github.com/hearth-mcp/hearth/pkg/tool"
	"github.com/hearth-mcp/hearth/pkg/workspace/index"
)

// IndexDir is the directory inside $HEARTH_HOME that holds the indexes.
const IndexDir = "index"

// Options configure the family.
type Options struct {
	// Worker is the command that runs RunWorkerJob, without its flags (WorkerJob.Args). Default:
	// this executable with the index-worker subcommand (hearthd's own binary).
	Worker []string
	// Git is the git program. Default: "git" looked up in PATH; "-" means
	// none (the family works without git, listing files by walking).
	Git string
}

// Open opens the family. Its child processes (the index worker, git) run
// under children, the daemon's supervisor; without one (a test) the family
// makes its own.
func Open(children *supervisor.Supervisor) tool.Opener {
	return func(env tool.Env) (tool.Family, error) { return open(env, children, Options{}) }
}

// Family is the workspace family as the daemon holds it.
type Family struct {
	sup     *supervisor.Supervisor
	log     *zap.Logger
	dir     string // where the index files live
	dirErr  error  // why dir could not be made, if it could not
	worker  []string
	gitPath string

	mu      sync.Mutex
	handles map[string]*handle       // open indexes by file path
	builds  map[string]chan struct{} // one build at a time per repository
	running map[string]int           // index paths being written by a build now

	gitVersion struct {
		sync.Mutex
		v string
	}
}

var _ tool.Family = (*Family)(nil)

func open(env tool.Env, sup *supervisor.Supervisor, o Options) (*Family, error) {
	if sup == nil {
		sup = supervisor.New(supervisor.Options{})
	}
	log := env.Log
	if log == nil {
		log = zap.NewNop()
	}
	f := &Family{sup: sup, log: log, worker: o.Worker, handles: map[string]*handle{}, builds: map[string]chan struct{}{}, running: map[string]int{}}
	if len(f.worker) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("workspace: cannot find the daemon's own binary for the index worker: %w", err)
		}
		f.worker = []string{exe, WorkerCommand}
	}
	switch o.Git {
	case "-":
	case "":
		if p, err := supervisor.LookPath("git"); err == nil {
			f.gitPath = p
		} else {
			log.Info("git not found in PATH: the workspace tools list files by walking directories and workspace_status has no git fields")
		}
	default:
		f.gitPath = o.Git
	}
	// A missing data directory is reported by the tools that need it, not by
	// refusing to start: search of existing indexes and status still work.
	if env.Home == "" {
		f.dirErr = errors.New("the daemon has no data directory")
	} else {
		f.dir = filepath.Join(env.Home, IndexDir)
		if err := os.MkdirAll(f.dir, 0o700); err != nil {
			f.dirErr = err
			log.Warn("cannot create the index directory", zap.String("dir", f.dir), zap.Error(err))
		} else {
			f.removeStaleTemps() // no build runs yet: every temporary file is stale
		}
	}
	return f, nil
}

// Close releases every open index.
func (f *Family) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for p, h := range f.handles {
		h.stale = true
		if h.refs == 0 {
			h.ix.Close()
		}
		delete(f.handles, p)
	}
	return nil
}

// indexPath is where root's index lives: a hash of the root, so that any
// path is a safe, short file name.
func (f *Family) indexPath(root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(f.dir, hex.EncodeToString(sum[:8])+".idx")
}

// root finds the repository of a call, as a tool error when there is none.
func (f *Family) root(repoPath string, c tool.Client) (string, error) {
	root, err := repo.Find(repoPath, c.Cwd, c.Roots)
	if err == nil {
		return root, nil
	}
	var re *repo.Error
	if errors.As(err, &re) {
		te := tool.Errorf(tool.NotFound, "%s", re.Reason)
		if re.Explicit {
			return "", te.With("hint", "repo_path must name an existing directory")
		}
		return "", te.With("hint", "pass repo_path, or start the client inside a git repository")
	}
	return "", err
}

// handle is an open index shared by concurrent searches. It is closed when
// it has been replaced (stale) and the last search using it is done.
type handle struct {
	ix    *index.Index
	fi    os.FileInfo
	refs  int
	stale bool
}

// errNoIndexFile says a repository has no index yet.
var errNoIndexFile = errors.New("no index")

// acquire returns the current index of root, opening it (again) when the
// file is new or was replaced since it was last opened. release must follow.
func (f *Family) acquire(root string) (*handle, error) {
	if f.dir == "" {
		return nil, errNoIndexFile
	}
	path := f.indexPath(root)
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		f.drop(path)
		return nil, errNoIndexFile
	}
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	if h := f.handles[path]; h != nil && os.SameFile(h.fi, fi) && h.fi.ModTime().Equal(fi.ModTime()) && h.fi.Size() == fi.Size() {
		h.refs++
		f.mu.Unlock()
		return h, nil
	}
	f.mu.Unlock()

	ix, err := index.Open(path)
	if err != nil {
		return nil, err
	}
	if ix.Meta().Repo != root {
		ix.Close()
		return nil, fmt.Errorf("%w: the index file belongs to %s", index.ErrCorrupt, ix.Meta().Repo)
	}
	h := &handle{ix: ix, fi: fi, refs: 1}
	f.mu.Lock()
	if old := f.handles[path]; old != nil {
		old.stale = true
		if old.refs == 0 {
			old.ix.Close()
		}
	}
	f.handles[path] = h
	f.mu.Unlock()
	return h, nil
}

func (f *Family) release(h *handle) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h.refs--; h.refs == 0 && h.stale {
		h.ix.Close()
	}
}

// drop forgets the handle of a removed index file.
func (f *Family) drop(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.handles[path]; h != nil {
		h.stale = true
		if h.refs == 0 {
			h.ix.Close()
		}
		delete(f.handles, path)
	}
}

// lockBuild waits until no other build of root runs, or ctx ends.
func (f *Family) lockBuild(ctx context.Context, root string) (unlock func(), err error) {
	f.mu.Lock()
	ch := f.builds[root]
	if ch == nil {
		ch = make(chan struct{}, 1)
		f.builds[root] = ch
	}
	f.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
