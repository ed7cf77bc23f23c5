package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// workerEnv makes the test binary act as `hearthd index-worker` when the
// family starts it, so unit tests need no built daemon.
const workerEnv = "HEARTH_WORKSPACE_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		os.Exit(testWorker(os.Args[2:]))
	}
	os.Setenv(workerEnv, "1")
	os.Exit(m.Run())
}

type fixture struct {
	t   *testing.T
	f   *Family
	sup *supervisor.Supervisor
	reg *tool.Registry
	cwd string // the client's directory
}

func newFixture(t *testing.T, cwd string) *fixture {
	t.Helper()
	sup := supervisor.New(supervisor.Options{Grace: 500 * time.Millisecond})
	f, err := open(tool.Env{Home: t.TempDir(), Log: zap.NewNop()}, sup, Options{Worker: []string{os.Args[0], WorkerCommand}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	reg := tool.NewRegistry("test")
	for _, tl := range f.Tools() {
		if err := reg.Add(tl); err != nil {
			t.Fatalf("tool contract: %v", err)
		}
	}
	return &fixture{t: t, f: f, sup: sup, reg: reg, cwd: cwd}
}

// recorder keeps a call's progress reports.
type recorder struct {
	mu       sync.Mutex
	progress []float64
	total    float64
}

func (r *recorder) Progress(p, total float64, _ string) {
	r.mu.Lock()
	r.progress = append(r.progress, p)
	r.total = total
	r.mu.Unlock()
}
func (r *recorder) Log(tool.Level, string, any) {}

// call runs a tool as the daemon does: arguments checked by the registry,
// then the handler under the tool's timeout. The result comes back decoded.
func (fx *fixture) call(ctx context.Context, name string, args any, rep tool.Reporter) (map[string]any, error) {
	fx.t.Helper()
	e, ok := fx.reg.Lookup(name)
	if !ok {
		fx.t.Fatalf("no tool %s", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		fx.t.Fatal(err)
	}
	checked, bad := e.CheckArgs(raw)
	if bad != nil {
		return nil, bad
	}
	ctx, cancel := context.WithTimeout(ctx, e.CallTimeout(checked))
	defer cancel()
	res, err := e.Handler(ctx, tool.NewCall(name, checked, nil, tool.Client{Cwd: fx.cwd}, rep))
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		fx.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		fx.t.Fatal(err)
	}
	return m, nil
}

func (fx *fixture) ok(name string, args any) map[string]any {
	fx.t.Helper()
	m, err := fx.call(context.Background(), name, args, nil)
	if err != nil {
		fx.t.Fatalf("%s %v: %v", name, args, err)
	}
	return m
}

// fail runs a call that must fail with code and returns the error.
func (fx *fixture) fail(code tool.Code, name string, args any) *tool.Error {
	fx.t.Helper()
	_, err := fx.call(context.Background(), name, args, nil)
	te, ok := tool.AsError(err)
	if !ok || te.Code != code {
		fx.t.Fatalf("%s %v: got %v, want %s", name, args, err, code)
	}
	return te
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is required under CI")
		}
		t.Skip("git not installed")
	}
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newRepo makes a small committed git repository:
//
//	main.go, pkg/util.go, docs/guide.md  tracked text
//	logo.bin                             tracked binary
//	.gitignore (ignores build/)          tracked
//	build/out.txt                        ignored
//	notes.txt                            untracked, not ignored
func newRepo(t *testing.T) string {
	t.Helper()
	needGit(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "main.go"), "package main\n\n// Hello greets.\nfunc Hello() string {\n\treturn \"hello, World\"\n}\n\nfunc main() { println(Hello()) }\n")
	write(t, filepath.Join(dir, "pkg/util.go"), "package pkg\n\n// HELLO is loud.\nconst HELLO = 1\n\nfunc helper() int { return HELLO + 41 }\n")
	write(t, filepath.Join(dir, "docs/guide.md"), "# Guide\n\nSay hello to the index.\nline four\nline five\nline six\n")
	write(t, filepath.Join(dir, "logo.bin"), "PNG\x00\x01hello\x00")
	write(t, filepath.Join(dir, ".gitignore"), "build/\n")
	write(t, filepath.Join(dir, "build/out.txt"), "hello from a build\n")
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "first")
	write(t, filepath.Join(dir, "notes.txt"), "hello notes\n")
	return dir
}

func hitPaths(m map[string]any) []string {
	var out []string
	for _, h := range m["hits"].([]any) {
		out = append(out, h.(map[string]any)["path"].(string))
	}
	return out
}

func TestIndexBuildAndStatus(t *testing.T) {
	dir := newRepo(t)
	fx := newFixture(t, filepath.Join(dir, "pkg")) // discovery walks up to .git

	st := fx.ok("index_status", map[string]any{})
	if st["exists"] != false || st["repo"] != dir {
		t.Fatalf("before a build: %v", st)
	}
	rep := &recorder{}
	res, err := fx.call(context.Background(), "index_build", map[string]any{}, rep)
	if err != nil {
		t.Fatal(err)
	}
	// Listed: .gitignore main.go pkg/util.go docs/guide.md logo.bin notes.txt;
	// logo.bin is binary; build/ is ignored.
	if res["repo"] != dir || res["source"] != "git" || res["files"] != 5.0 || res["skipped"] != 1.0 || res["listed"] != 6.0 {
		t.Fatalf("index_build: %v", res)
	}
	if head := gitIn(t, dir, "rev-parse", "HEAD"); res["head"] != head {
		t.Fatalf("head %v, want %s", res["head"], head)
	}
	if len(rep.progress) == 0 || rep.progress[len(rep.progress)-1] != 6 || rep.total != 6 {
		t.Fatalf("progress %v total %v", rep.progress, rep.total)
	}
	if _, err := os.Stat(res["index_path"].(string)); err != nil {
		t.Fatal(err)
	}

	st = fx.ok("index_status", map[string]any{})
	ch := st["changed_since"].(map[string]any)
	if st["exists"] != true || st["files"] != 5.0 || ch["modified"] != 0.0 || ch["added"] != 0.0 || ch["deleted"] != 0.0 {
		t.Fatalf("fresh index_status: %v", st)
	}
	if st["head"] != st["current_head"] {
		t.Fatalf("head %v current %v", st["head"], st["current_head"])
	}
	// Change the tree: modify one file, delete one, add one text and one binary.
	time.Sleep(10 * time.Millisecond)
	write(t, filepath.Join(dir, "main.go"), "package main\n// changed\n")
	os.Remove(filepath.Join(dir, "docs/guide.md"))
	write(t, filepath.Join(dir, "added.txt"), "new\n")
	write(t, filepath.Join(dir, "added.bin"), "\x00\x00")
	st = fx.ok("index_status", map[string]any{})
	ch = st["changed_since"].(map[string]any)
	if ch["modified"] != 1.0 || ch["deleted"] != 1.0 || ch["added"] != 1.0 {
		t.Fatalf("changed_since: %v", ch)
	}
	ex := ch["examples"].(map[string]any)
	if ex["modified"].([]any)[0] != "main.go" || ex["deleted"].([]any)[0] != "docs/guide.md" || ex["added"].([]any)[0] != "added.txt" {
		t.Fatalf("examples: %v", ex)
	}

	// incremental (the default) takes unchanged files from the old index;
	// incremental:false reads every file again.
	res = fx.ok("index_build", map[string]any{})
	if res["reused"] != 3.0 || res["files"] != 5.0 || res["incremental"] != true {
		t.Fatalf("incremental build: %v", res)
	}
	res = fx.ok("index_build", map[string]any{"incremental": false})
	if res["reused"] != 0.0 || res["files"] != 5.0 || res["incremental"] != false {
		t.Fatalf("full build: %v", res)
	}
	if m := fx.ok("search", map[string]any{"query": "changed"}); len(hitPaths(m)) != 1 {
		t.Fatalf("search after rebuild sees the new content: %v", m)
	}
}

func TestRepoPathArgument(t *testing.T) {
	a, b := newRepo(t), newRepo(t)
	write(t, filepath.Join(b, "only_b.txt"), "unique marker\n")
	fx := newFixture(t, a)
	fx.ok("index_build", map[string]any{})
	fx.ok("index_build", map[string]any{"repo_path": b})
	if m := fx.ok("search", map[string]any{"query": "unique marker"}); len(hitPaths(m)) != 0 {
		t.Fatalf("repo a has no marker: %v", m)
	}
	if m := fx.ok("search", map[string]any{"query": "unique marker", "repo_path": b}); len(hitPaths(m)) != 1 || m["repo"] != b {
		t.Fatalf("repo b has it: %v", m)
	}
	// A relative repo_path is resolved against the client's directory.
	rel, _ := filepath.Rel(a, b)
	if m := fx.ok("index_status", map[string]any{"repo_path": rel}); m["repo"] != b {
		t.Fatalf("relative repo_path: %v", m)
	}
	for _, name := range []string{"index_build", "index_status", "search", "show_file", "workspace_status"} {
		args := map[string]any{"repo_path": filepath.Join(a, "missing")}
		switch name {
		case "search":
			args["query"] = "x"
		case "show_file":
			args["path"] = "main.go"
		}
		fx.fail(tool.NotFound, name, args)
	}
	// repo_path is the argument the clarification tools take too: null and
	// "" mean the default, the client's repository.
	for _, dflt := range []any{nil, ""} {
		if m := fx.ok("index_status", map[string]any{"repo_path": dflt}); m["repo"] != a {
			t.Fatalf("repo_path %q: %v", dflt, m)
		}
	}
	// No repo_path and a client directory outside any repository.
	outside := newFixture(t, t.TempDir())
	te := outside.fail(tool.NotFound, "index_build", map[string]any{})
	if te.Fields["hint"] == nil {
		t.Fatalf("no hint: %v", te)
	}
	// A directory without .git can still be indexed when named explicitly.
	plain := t.TempDir()
	write(t, filepath.Join(plain, "a.txt"), "plain hello\n")
	write(t, filepath.Join(plain, "node_modules/x/b.txt"), "plain hello\n")
	if m := outside.ok("index_build", map[string]any{"repo_path": plain}); m["source"] != "walk" || m["files"] != 1.0 {
		t.Fatalf("walked build: %v", m)
	}
}

func TestSearchArguments(t *testing.T) {
	dir := newRepo(t)
	fx := newFixture(t, dir)
	te := fx.fail(tool.NoIndex, "search", map[string]any{"query": "hello"})
	if !strings.Contains(te.Fields["hint"].(string), "index_build") {
		t.Fatalf("NO_INDEX hint: %v", te.Fields)
	}
	fx.ok("index_build", map[string]any{})

	// query, case_sensitive (default false).
	all := fx.ok("search", map[string]any{"query": "hello"})
	if n := len(hitPaths(all)); n != 9 { // main.go ×4, util.go ×3 (HELLO), guide.md, notes.txt; build/ ignored
		t.Fatalf("case-insensitive hello: %v", hitPaths(all))
	}
	cs := fx.ok("search", map[string]any{"query": "HELLO", "case_sensitive": true})
	if got := hitPaths(cs); len(got) != 3 || got[0] != "pkg/util.go" {
		t.Fatalf("case-sensitive HELLO: %v", got)
	}
	// regex.
	re := fx.ok("search", map[string]any{"query": `func \w+\(\)`, "regex": true})
	if got := hitPaths(re); len(got) != 3 {
		t.Fatalf("regex: %v", got)
	}
	if lit := fx.ok("search", map[string]any{"query": `func \w+\(\)`}); len(hitPaths(lit)) != 0 {
		t.Fatalf("the same text literally: %v", lit)
	}
	fx.fail(tool.InvalidRequest, "search", map[string]any{"query": `a(b`, "regex": true})
	fx.fail(tool.InvalidRequest, "search", map[string]any{"query": `(a)\1`, "regex": true})
	// path_glob.
	g := fx.ok("search", map[string]any{"query": "hello", "path_glob": "*.md"})
	if got := hitPaths(g); len(got) != 1 || got[0] != "docs/guide.md" {
		t.Fatalf("path_glob: %v", got)
	}
	g = fx.ok("search", map[string]any{"query": "hello", "path_glob": "pkg/**"})
	if got := hitPaths(g); len(got) == 0 || got[0] != "pkg/util.go" {
		t.Fatalf("path_glob pkg/**: %v", got)
	}
	fx.fail(tool.InvalidRequest, "search", map[string]any{"query": "hello", "path_glob": "[abc"})
	// limit.
	l := fx.ok("search", map[string]any{"query": "hello", "limit": 2})
	if len(hitPaths(l)) != 2 || l["truncated"] != true {
		t.Fatalf("limit 2: %v", l)
	}
	fx.fail(tool.InvalidRequest, "search", map[string]any{"query": "hello", "limit": 201})
	fx.fail(tool.InvalidRequest, "search", map[string]any{"query": "hello", "limit": 0})
	// context_lines.
	c0 := fx.ok("search", map[string]any{"query": "line five", "context_lines": 0})
	c1 := fx.ok("search", map[string]any{"query": "line five", "context_lines": 1})
	h0, h1 := c0["hits"].([]any)[0].(map[string]any), c1["hits"].([]any)[0].(map[string]any)
	if len(h0["before"].([]any)) != 0 || len(h1["before"].([]any)) != 1 || h1["before"].([]any)[0] != "line four" ||
		h1["after"].([]any)[0] != "line six" || h1["line"] != 5.0 || h1["column"] != 1.0 {
		t.Fatalf("context_lines: %v / %v", h0, h1)
	}
	fx.fail(tool.InvalidRequest, "search", map[string]any{"query": "x", "context_lines": 11})
	// query bounds and unknown arguments.
	fx.fail(tool.InvalidRequest, "search", map[string]any{"query": ""})
	fx.fail(tool.InvalidRequest, "search", map[string]any{"query": strings.Repeat("a", 1001)})
	fx.fail(tool.InvalidRequest, "search", map[string]any{"query": "x", "fuzzy": true})
}

func TestShowFileArguments(t *testing.T) {
	dir := newRepo(t)
	fx := newFixture(t, dir)
	m := fx.ok("show_file", map[string]any{"path": "docs/guide.md"})
	if m["text"] != "1\t# Guide\n2\t\n3\tSay hello to the index.\n4\tline four\n5\tline five\n6\tline six\n" ||
		m["total_lines"] != 6.0 || m["end_line"] != 6.0 || m["truncated"] != false {
		t.Fatalf("whole file: %v", m)
	}
	m = fx.ok("show_file", map[string]any{"path": "docs/guide.md", "start_line": 4})
	if m["text"] != "4\tline four\n5\tline five\n6\tline six\n" || m["start_line"] != 4.0 {
		t.Fatalf("start_line: %v", m)
	}
	m = fx.ok("show_file", map[string]any{"path": "docs/guide.md", "start_line": 2, "end_line": 3})
	if m["text"] != "2\t\n3\tSay hello to the index.\n" || m["end_line"] != 3.0 {
		t.Fatalf("range: %v", m)
	}
	m = fx.ok("show_file", map[string]any{"path": "docs/guide.md", "end_line": 1})
	if m["text"] != "1\t# Guide\n" {
		t.Fatalf("end_line: %v", m)
	}
	// An end past the file is clamped; a start past it is an error.
	if m = fx.ok("show_file", map[string]any{"path": "docs/guide.md", "start_line": 6, "end_line": 99}); m["text"] != "6\tline six\n" {
		t.Fatalf("clamped end: %v", m)
	}
	fx.fail(tool.InvalidRequest, "show_file", map[string]any{"path": "docs/guide.md", "start_line": 7})
	fx.fail(tool.InvalidRequest, "show_file", map[string]any{"path": "docs/guide.md", "start_line": 3, "end_line": 2})
	fx.fail(tool.InvalidRequest, "show_file", map[string]any{"path": "docs/guide.md", "start_line": 0})
	// repo_path.
	other := newRepo(t)
	write(t, filepath.Join(other, "only.txt"), "other\n")
	fx.fail(tool.NotFound, "show_file", map[string]any{"path": "only.txt"})
	if m = fx.ok("show_file", map[string]any{"path": "only.txt", "repo_path": other}); m["text"] != "1\tother\n" {
		t.Fatalf("repo_path: %v", m)
	}

	// Refusals.
	outside := filepath.Join(t.TempDir(), "secret.txt")
	write(t, outside, "TOPSECRET\n")
	if err := os.Symlink(outside, filepath.Join(dir, "link-out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("docs/guide.md", filepath.Join(dir, "link-in")); err != nil {
		t.Fatal(err)
	}
	if m = fx.ok("show_file", map[string]any{"path": "link-in", "end_line": 1}); m["text"] != "1\t# Guide\n" {
		t.Fatalf("a symlink inside the repository is followed: %v", m)
	}
	for _, p := range []string{"../x", "docs/../../x", outside, "/etc/passwd", "link-out", "a\x00b", "logo.bin", "docs"} {
		te := fx.fail(tool.InvalidRequest, "show_file", map[string]any{"path": p})
		if strings.Contains(te.Message, "TOPSECRET") {
			t.Fatalf("leaked content: %v", te)
		}
	}
	fx.fail(tool.NotFound, "show_file", map[string]any{"path": "missing.go"})
	fx.fail(tool.InvalidRequest, "show_file", map[string]any{"path": "main.go", "lines": 3})

	// Special files, a link to one and a directory leading out are refused
	// at once, saying what they are: none may block (opening a FIFO for
	// reading waits for a writer) or hold a descriptor.
	specials := safefiletest.Make(t, filepath.Join(dir, "special"))
	if err := os.Symlink("special/fifo", filepath.Join(dir, "link-fifo")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	refusals := map[string]string{
		"docs":          "docs is a directory, not a regular file",
		"link-fifo":     "link-fifo is a FIFO, not a regular file",
		"up/secret.txt": "up/secret.txt leads out of the repository through a symbolic link",
	}
	for _, sp := range specials {
		refusals["special/"+sp.Name] = "special/" + sp.Name + " is a " + sp.Kind + ", not a regular file"
	}
	for p, want := range refusals {
		safefiletest.Prompt(t, "show_file "+p, func() {
			_, err := fx.call(context.Background(), "show_file", map[string]any{"path": p}, nil)
			if te, ok := tool.AsError(err); !ok || te.Code != tool.InvalidRequest || !strings.Contains(te.Message, want) {
				t.Errorf("show_file %s: %v; want %s with %q", p, err, tool.InvalidRequest, want)
			}
		})
	}
}

// TestSpecialFilesInTheRepository: git lists files that are now a FIFO, a
// socket and a device, and d/x where d is now a symbolic link to a directory
// outside the repository. index_build completes and skips them (never
// blocking on one), search never shows the outside file's lines, and
// index_status and show_file answer at once.
func TestSpecialFilesInTheRepository(t *testing.T) {
	dir := newRepo(t)
	for _, n := range []string{"special/fifo", "special/sock", "special/dev", "d/x"} {
		write(t, filepath.Join(dir, n), "tracked "+n+"\n")
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "tracked files about to become special")
	if err := os.RemoveAll(filepath.Join(dir, "special")); err != nil {
		t.Fatal(err)
	}
	specials := safefiletest.Make(t, filepath.Join(dir, "special"))
	outside := t.TempDir()
	write(t, filepath.Join(outside, "x"), "OUTSIDE SECRET line\n")
	if err := os.RemoveAll(filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	fx := newFixture(t, dir)
	safefiletest.Prompt(t, "index_build", func() {
		res, err := fx.call(context.Background(), "index_build", map[string]any{}, nil)
		// Indexed: .gitignore main.go pkg/util.go docs/guide.md notes.txt.
		// Skipped: logo.bin, the specials, d/x, and d itself (untracked).
		if err != nil || res["files"] != 5.0 || res["skipped"] != res["listed"].(float64)-5 {
			t.Errorf("index_build: %v %v", res, err)
		}
	})
	if t.Failed() {
		return
	}
	if m := fx.ok("search", map[string]any{"query": "OUTSIDE SECRET"}); len(hitPaths(m)) != 0 {
		t.Fatalf("search shows a file outside the repository: %v", m)
	}
	if m := fx.ok("search", map[string]any{"query": "tracked"}); len(hitPaths(m)) != 0 {
		t.Fatalf("search shows files that are gone: %v", m)
	}
	safefiletest.Prompt(t, "index_status", func() {
		st, err := fx.call(context.Background(), "index_status", map[string]any{}, nil)
		if err != nil {
			t.Errorf("index_status: %v", err)
		} else if ch := st["changed_since"].(map[string]any); ch["added"] != 0.0 || ch["modified"] != 0.0 || ch["deleted"] != 0.0 {
			t.Errorf("nothing the indexer would take changed: %v", ch)
		}
	})
	for _, sp := range specials {
		safefiletest.Prompt(t, "show_file special/"+sp.Name, func() {
			_, err := fx.call(context.Background(), "show_file", map[string]any{"path": "special/" + sp.Name}, nil)
			if err == nil || !strings.Contains(err.Error(), "is a "+sp.Kind+", not a regular file") {
				t.Errorf("show_file special/%s: %v", sp.Name, err)
			}
		})
	}
	te := fx.fail(tool.InvalidRequest, "show_file", map[string]any{"path": "d/x"})
	if !strings.Contains(te.Message, "leads out of the repository") {
		t.Fatalf("show_file d/x: %v", te)
	}
}

func TestShowFileBounds(t *testing.T) {
	dir := newRepo(t)
	fx := newFixture(t, dir)
	// A file with lines whose numbered text passes 1 MiB is cut at a line.
	var b strings.Builder
	for b.Len() < 2<<20 {
		b.WriteString(strings.Repeat("x", 99) + "\n")
	}
	write(t, filepath.Join(dir, "big.txt"), b.String())
	m := fx.ok("show_file", map[string]any{"path": "big.txt"})
	text := m["text"].(string)
	if m["truncated"] != true || len(text) > showFileMaxBytes || !strings.HasSuffix(text, "x\n") || m["total_lines"] == nil {
		t.Fatalf("truncated: %v %d", m["truncated"], len(text))
	}
	if m = fx.ok("show_file", map[string]any{"path": "big.txt", "start_line": 20000, "end_line": 20001}); m["text"] != "20000\t"+strings.Repeat("x", 99)+"\n20001\t"+strings.Repeat("x", 99)+"\n" {
		t.Fatalf("range deep in a big file: %.80v", m["text"])
	}
	// One line longer than the bound shows its start.
	write(t, filepath.Join(dir, "long.txt"), strings.Repeat("y", 3<<20))
	m = fx.ok("show_file", map[string]any{"path": "long.txt"})
	if m["truncated"] != true || len(m["text"].(string)) != showFileMaxBytes {
		t.Fatalf("one long line: %v %d", m["truncated"], len(m["text"].(string)))
	}
	// CRLF line endings do not leak a \r.
	write(t, filepath.Join(dir, "crlf.txt"), "a\r\nb\r\n")
	if m = fx.ok("show_file", map[string]any{"path": "crlf.txt"}); m["text"] != "1\ta\n2\tb\n" {
		t.Fatalf("crlf: %q", m["text"])
	}
}

func TestWorkspaceAndCheckStatus(t *testing.T) {
	dir := newRepo(t)
	fx := newFixture(t, dir)
	ws := fx.ok("workspace_status", map[string]any{})
	g := ws["git"].(map[string]any)
	if ws["repo"] != dir || g["branch"] != "main" || g["head"] != gitIn(t, dir, "rev-parse", "HEAD") || g["dirty_files"] != 1.0 || g["detached"] != false {
		t.Fatalf("workspace_status: %v", ws)
	}
	if ws["index"].(map[string]any)["exists"] != false {
		t.Fatalf("no index yet: %v", ws)
	}
	fx.ok("index_build", map[string]any{})
	write(t, filepath.Join(dir, "main.go"), "changed\n")
	gitIn(t, dir, "commit", "-qam", "second")
	gitIn(t, dir, "checkout", "-q", "--detach")
	ws = fx.ok("workspace_status", map[string]any{})
	g, ix := ws["git"].(map[string]any), ws["index"].(map[string]any)
	if g["detached"] != true || g["branch"] != nil || ix["exists"] != true || ix["stale"] != true || ix["files"] != 5.0 {
		t.Fatalf("after a commit: %v", ws)
	}

	cs := fx.ok("check_status", map[string]any{})
	git, idx, ch := cs["git"].(map[string]any), cs["index"].(map[string]any), cs["children"].(map[string]any)
	if git["present"] != true || git["version"] == "" || idx["writable"] != true || idx["indexes"] != 1.0 || idx["damaged"] != 0.0 ||
		ch["grace_ms"] != 500.0 || ch["max"] != float64(supervisor.DefaultMaxChildren) || ch["live"] != 0.0 {
		t.Fatalf("check_status: %v", cs)
	}
	fx.fail(tool.InvalidRequest, "check_status", map[string]any{"verbose": true})
}

func TestWithoutGit(t *testing.T) {
	dir := newRepo(t)
	sup := supervisor.New(supervisor.Options{})
	f, err := open(tool.Env{Home: t.TempDir(), Log: zap.NewNop()}, sup, Options{Worker: []string{os.Args[0], WorkerCommand}, Git: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fx := &fixture{t: t, f: f, sup: sup, reg: tool.NewRegistry("test"), cwd: dir}
	for _, tl := range f.Tools() {
		fx.reg.Add(tl)
	}
	// Listing falls back to a walk: build/ is no longer ignored.
	if m := fx.ok("index_build", map[string]any{}); m["source"] != "walk" || m["files"] != 6.0 || m["head"] != nil {
		t.Fatalf("build without git: %v", m)
	}
	if m := fx.ok("workspace_status", map[string]any{}); m["git"] != nil || !strings.Contains(m["note"].(string), "git") {
		t.Fatalf("workspace_status without git: %v", m)
	}
	if m := fx.ok("check_status", map[string]any{}); m["git"].(map[string]any)["present"] != false {
		t.Fatalf("check_status without git: %v", m)
	}
}

func TestDamagedIndex(t *testing.T) {
	dir := newRepo(t)
	fx := newFixture(t, dir)
	res := fx.ok("index_build", map[string]any{})
	if err := os.WriteFile(res["index_path"].(string), []byte("not an index"), 0o600); err != nil {
		t.Fatal(err)
	}
	te := fx.fail(tool.NoIndex, "search", map[string]any{"query": "hello"})
	if !strings.Contains(te.Message, "damaged") {
		t.Fatalf("damaged: %v", te)
	}
	if st := fx.ok("index_status", map[string]any{}); st["damaged"] == nil {
		t.Fatalf("index_status of a damaged index: %v", st)
	}
	// An incremental build over a damaged file rebuilds it.
	if m := fx.ok("index_build", map[string]any{}); m["files"] != 5.0 || m["reused"] != 0.0 {
		t.Fatalf("rebuild: %v", m)
	}
	fx.ok("search", map[string]any{"query": "hello"})
}

// goroot is a large tree for builds that must be interrupted.
func goroot(t *testing.T) string {
	t.Helper()
	src := filepath.Join(build.Default.GOROOT, "src")
	if _, err := os.Stat(filepath.Join(src, "net/http/server.go")); err != nil {
		t.Skip("Go's source tree is not installed")
	}
	if testing.Short() {
		// The race detector's run (-short) indexes with an instrumented
		// worker, ten times slower: a part of the tree, still large
		// enough to report progress and be cancelled mid-way.
		return filepath.Join(src, "net")
	}
	return src
}

func TestBuildCancelKeepsPreviousIndex(t *testing.T) {
	src := goroot(t)
	fx := newFixture(t, t.TempDir())
	// A complete build first, then a full rebuild cancelled mid-way.
	first := fx.ok("index_build", map[string]any{"repo_path": src})
	ctx, cancel := context.WithCancel(context.Background())
	rep := &cancelOnProgress{cancel: cancel}
	_, err := fx.call(ctx, "index_build", map[string]any{"repo_path": src, "incremental": false}, rep)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: %v", err)
	}
	if n := fx.sup.Live(); n != 0 {
		t.Fatalf("%d children still live", n)
	}
	tmps, _ := filepath.Glob(first["index_path"].(string) + ".tmp-*")
	if len(tmps) != 0 {
		t.Fatalf("temporary files left: %v", tmps)
	}
	st := fx.ok("index_status", map[string]any{"repo_path": src})
	if st["built_at"] != first["built_at"].(string) || st["files"] != first["files"] {
		t.Fatalf("the previous index was not kept: %v vs %v", st, first)
	}
	// A deadline behaves the same: the caller sees DeadlineExceeded, which
	// the protocol layer reports as TOOL_TIMEOUT with timeoutMs.
	_, err = fx.call(context.Background(), "index_build", map[string]any{"repo_path": src, "incremental": false, "timeout_ms": 50}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timed-out build: %v", err)
	}
	if n := fx.sup.Live(); n != 0 {
		t.Fatalf("%d children still live after the timeout", n)
	}
}

// cancelOnProgress cancels its call at the first progress report past zero.
type cancelOnProgress struct {
	cancel context.CancelFunc
	once   sync.Once
}

func (c *cancelOnProgress) Progress(p, _ float64, _ string) {
	if p > 0 {
		c.once.Do(c.cancel)
	}
}
func (c *cancelOnProgress) Log(tool.Level, string, any) {}

func TestProgressOfALargeBuild(t *testing.T) {
	src := goroot(t)
	fx := newFixture(t, t.TempDir())
	rep := &recorder{}
	res, err := fx.call(context.Background(), "index_build", map[string]any{"repo_path": src}, rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.progress) < 2 {
		t.Fatalf("progress %v", rep.progress)
	}
	for i := 1; i < len(rep.progress); i++ {
		if rep.progress[i] <= rep.progress[i-1] {
			t.Fatalf("progress not strictly increasing at %d: %v", i, rep.progress)
		}
	}
	if rep.total != res["listed"].(float64) || rep.progress[len(rep.progress)-1] != rep.total {
		t.Fatalf("progress ends at %v of %v; listed %v", rep.progress[len(rep.progress)-1], rep.total, res["listed"])
	}
}

// TestChildSlotErrors: when the supervisor starts no child because every
// slot stayed busy until the deadline, or because the call was cancelled
// while it waited, the family's error carries QUEUE_OVERLOADED or CANCELLED.
func TestChildSlotErrors(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	sup := supervisor.New(supervisor.Options{MaxChildren: 1, Grace: 100 * time.Millisecond})
	// Any program stands in for git: it never starts.
	f, err := open(tool.Env{Home: t.TempDir(), Log: zap.NewNop()}, sup, Options{Worker: []string{os.Args[0], WorkerCommand}, Git: sleep})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })

	hold, release := context.WithCancel(context.Background())
	held := make(chan struct{})
	go func() {
		defer close(held)
		sup.Run(hold, supervisor.Spec{Path: sleep, Args: []string{"60"}})
	}()
	defer func() { release(); <-held }()
	for deadline := time.Now().Add(10 * time.Second); sup.Live() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the child holding the only slot did not start")
		}
	}

	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	_, err = f.git(short, t.TempDir(), "status")
	te, ok := tool.AsError(err)
	if !ok || te.Code != tool.QueueOverloaded || te.Message != "every one of the 1 child slots stayed busy until the call's deadline" {
		t.Fatalf("busy: %v", err)
	}

	cancelled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	_, err = f.git(cancelled, t.TempDir(), "status")
	if te, ok := tool.AsError(err); !ok || te.Code != tool.Cancelled {
		t.Fatalf("cancelled: %v", err)
	}

	if te := f.notStarted(errors.New("start /nowhere: no such file or directory")); te != nil {
		t.Fatalf("a failure to start is no slot error: %v", te)
	}
}
