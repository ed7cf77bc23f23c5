package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/hearth-mcp/hearth/pkg/supervisor"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// A build of the repository named by holdRepoEnv runs a holding worker: it
// writes a temporary index file as index.Build does, then waits. SIGTERM
// (cancel, timeout) makes it exit 130 and the file named by holdGateEnv
// appearing makes it fail (exit 1); either way its temporary file stays
// behind, as a worker killed mid-build leaves it.
const (
	holdRepoEnv = "HEARTH_WORKSPACE_TEST_HOLD_REPO"
	holdGateEnv = "HEARTH_WORKSPACE_TEST_HOLD_GATE"
)

// testWorker is the worker the family starts in this package's tests.
func testWorker(args []string) int {
	arg := func(name string) string {
		if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
		return ""
	}
	hold := os.Getenv(holdRepoEnv)
	if hold == "" || arg("--repo") != hold {
		// The job as WorkerJob.Args wrote it, run as hearthd's index-worker
		// runs it: until SIGTERM.
		job := WorkerJob{Repo: arg("--repo"), Out: arg("--out"), Head: arg("--head"), Source: arg("--source"),
			Incremental: slices.Contains(args, "--incremental=true")}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		if err := RunWorkerJob(ctx, job, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "index-worker:", err)
			if errors.Is(err, context.Canceled) {
				return 130
			}
			return 1
		}
		return 0
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	io.Copy(io.Discard, os.Stdin)
	out := arg("--out")
	tmp, err := os.CreateTemp(filepath.Dir(out), filepath.Base(out)+".tmp-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp.Write(make([]byte, 4096))
	fmt.Println(`{"done":0,"total":1}`)
	tick := time.NewTicker(10 * time.Millisecond)
	limit := time.After(time.Minute)
	for {
		select {
		case <-term:
			return 130
		case <-limit:
			return 1
		case <-tick.C:
			if _, err := os.Stat(os.Getenv(holdGateEnv)); err == nil {
				return 1
			}
		}
	}
}

// plant writes a file of size bytes in dir.
func plant(t *testing.T, dir, name string, size int) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// plainRepo is a directory with one text file, indexed by walking.
func plainRepo(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "a.txt"), "hello\n")
	return dir
}

// waitTemp waits for the one temporary file of the index file out.
func waitTemp(t *testing.T, out string) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if tmps, _ := filepath.Glob(out + ".tmp-*"); len(tmps) == 1 {
			return tmps[0]
		}
	}
	t.Fatalf("no temporary file for %s", out)
	return ""
}

func temps(t *testing.T, dir string) []string {
	t.Helper()
	tmps, err := filepath.Glob(filepath.Join(dir, "*.tmp-*"))
	if err != nil {
		t.Fatal(err)
	}
	return tmps
}

func TestStaleTempsRemovedAtOpen(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, IndexDir)
	if err := os.MkdirAll(filepath.Join(dir, "0000000000000003.idx.tmp-3"), 0o700); err != nil {
		t.Fatal(err)
	}
	stale := []string{
		plant(t, dir, "0123456789abcdef.idx.tmp-1", 1000),
		plant(t, dir, "fedcba9876543210.idx.tmp-22", 2000),
	}
	kept := []string{
		plant(t, dir, "0123456789abcdef.idx", 10), // an index
		plant(t, dir, "notes.tmp-1", 10),          // not a temporary index file
		plant(t, dir, "0123456789abcdef.idx.tmp", 10),
		filepath.Join(dir, "0000000000000003.idx.tmp-3"), // a directory is not ours to remove
	}
	core, logs := observer.New(zap.InfoLevel)
	f, err := open(tool.Env{Home: home, Log: zap.New(core)}, supervisor.New(supervisor.Options{}),
		Options{Worker: []string{os.Args[0], WorkerCommand}, Git: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range stale {
		if exists(p) {
			t.Errorf("%s was not removed", filepath.Base(p))
		}
	}
	for _, p := range kept {
		if !exists(p) {
			t.Errorf("%s was removed", filepath.Base(p))
		}
	}
	entries := logs.FilterMessage("removed stale temporary index files").All()
	if len(entries) != 1 {
		t.Fatalf("log: %v", logs.All())
	}
	if c := entries[0].ContextMap(); c["files"] != int64(2) || c["bytes"] != int64(3000) || c["dir"] != dir {
		t.Fatalf("logged %v", c)
	}
	// Nothing to remove: nothing logged.
	core, logs = observer.New(zap.InfoLevel)
	g, err := open(tool.Env{Home: home, Log: zap.New(core)}, supervisor.New(supervisor.Options{}),
		Options{Worker: []string{os.Args[0], WorkerCommand}, Git: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if n := logs.FilterMessage("removed stale temporary index files").Len(); n != 0 {
		t.Fatalf("logged %d removals of nothing", n)
	}
}

// TestStaleTempsAndRunningBuilds: a build in progress keeps its temporary
// file while check_status counts the others and another repository's build
// removes them; cancelling the build removes its own.
func TestStaleTempsAndRunningBuilds(t *testing.T) {
	fx := newFixture(t, t.TempDir())
	a, b := plainRepo(t), plainRepo(t)
	t.Setenv(holdRepoEnv, a)
	t.Setenv(holdGateEnv, filepath.Join(t.TempDir(), "never"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := fx.call(ctx, "index_build", map[string]any{"repo_path": a}, nil)
		errc <- err
	}()
	running := waitTemp(t, fx.f.indexPath(a))
	stale := plant(t, fx.f.dir, "0123456789abcdef.idx.tmp-7", 1000)

	// check_status counts the stale file, not the running build's, and
	// removes nothing.
	idx := fx.ok("check_status", map[string]any{})["index"].(map[string]any)
	if idx["stale_temp_files"] != 1.0 || idx["stale_temp_bytes"] != 1000.0 {
		t.Fatalf("check_status during a build: %v", idx)
	}
	if !exists(stale) || !exists(running) {
		t.Fatal("check_status removed a file")
	}
	// Another repository's build sweeps the stale file, not the running one.
	fx.ok("index_build", map[string]any{"repo_path": b})
	if exists(stale) {
		t.Error("the stale file survived a build")
	}
	if !exists(running) {
		t.Fatal("a build removed the temporary file of a build still running")
	}
	idx = fx.ok("check_status", map[string]any{})["index"].(map[string]any)
	if idx["stale_temp_files"] != 0.0 || idx["stale_temp_bytes"] != 0.0 {
		t.Fatalf("check_status after the sweep: %v", idx)
	}

	// Cancelled: the worker exits leaving its file, the sweep removes it.
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: %v", err)
	}
	if tmps := temps(t, fx.f.dir); len(tmps) != 0 {
		t.Fatalf("left after the cancelled build: %v", tmps)
	}
}

// TestFailedBuildRemovesTemps: a worker that fails leaves its temporary
// file; the sweep after the build removes it and any other stale one.
func TestFailedBuildRemovesTemps(t *testing.T) {
	fx := newFixture(t, t.TempDir())
	a := plainRepo(t)
	gate := filepath.Join(t.TempDir(), "fail")
	t.Setenv(holdRepoEnv, a)
	t.Setenv(holdGateEnv, gate)
	errc := make(chan error, 1)
	go func() {
		_, err := fx.call(context.Background(), "index_build", map[string]any{"repo_path": a}, nil)
		errc <- err
	}()
	waitTemp(t, fx.f.indexPath(a))
	plant(t, fx.f.dir, "0123456789abcdef.idx.tmp-8", 10)
	write(t, gate, "")
	err := <-errc
	if te, ok := tool.AsError(err); !ok || te.Code != tool.Internal || !strings.Contains(te.Message, "worker failed") {
		t.Fatalf("failed build: %v", err)
	}
	if tmps := temps(t, fx.f.dir); len(tmps) != 0 {
		t.Fatalf("left after the failed build: %v", tmps)
	}
}
