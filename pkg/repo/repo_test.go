package repo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// client is what Find is told of a client: its directory and its roots.
type client struct {
	Cwd   string
	Roots []string
}

func find(repoPath string, c client) (string, error) { return Find(repoPath, c.Cwd, c.Roots) }

// tree makes root/.git and root/a/b, returning root (symlinks resolved, as
// Find returns them).
func tree(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".git", "a/b"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestFindWalksUpFromTheClientDirectory(t *testing.T) {
	root := tree(t)
	got, err := find("", client{Cwd: filepath.Join(root, "a", "b")})
	if err != nil || got != root {
		t.Fatalf("Find = %q, %v; want %q", got, err, root)
	}
}

func TestFindUsesRootsWhenThereIsNoHello(t *testing.T) {
	root := tree(t)
	got, err := find("", client{Roots: []string{"relative/ignored", filepath.Join(root, "a")}})
	if err != nil || got != root {
		t.Fatalf("Find = %q, %v; want %q", got, err, root)
	}
}

func TestRootsComeBeforeTheHello(t *testing.T) {
	// An editor started the shim in / but declared its workspace as a root.
	root := tree(t)
	got, err := find("", client{Cwd: "/", Roots: []string{filepath.Join(root, "a")}})
	if err != nil || got != root {
		t.Fatalf("Find = %q, %v; want %q", got, err, root)
	}
}

func TestFindAcceptsAGitFile(t *testing.T) {
	// Worktrees and submodules have a .git file, not a directory.
	root, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: /elsewhere\n"), 0o644)
	got, err := find("", client{Cwd: root})
	if err != nil || got != root {
		t.Fatalf("Find = %q, %v; want %q", got, err, root)
	}
}

func TestFindExplicitPath(t *testing.T) {
	root := tree(t)
	plain, _ := filepath.EvalSymlinks(t.TempDir()) // no .git: still the caller's choice
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o644)
	cases := []struct {
		name, path string
		client     client
		want       string
		wantErr    bool
	}{
		{"absolute", root, client{}, root, false},
		{"a subdirectory stands for its repository (as in git)", filepath.Join(root, "a"), client{}, root, false},
		{"without .git", plain, client{}, plain, false},
		{"symlink resolved", link, client{}, root, false},
		{"relative to the client", "a/b", client{Cwd: root}, root, false},
		{"relative, client unknown", "a/b", client{}, "", true},
		{"missing", filepath.Join(root, "nope"), client{}, "", true},
		{"a file", file, client{}, "", true},
		{"NUL byte", root + "\x00x", client{}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := find(c.path, c.client)
			if c.wantErr {
				var re *Error
				if !errors.As(err, &re) || !re.Explicit || !errors.Is(err, ErrNotFound) || re.Reason == "" {
					t.Fatalf("Find(%q) = %q, %v; want an explicit *Error", c.path, got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Find(%q) = %q, %v; want %q", c.path, got, err, c.want)
			}
		})
	}
}

func TestFindFailures(t *testing.T) {
	noGit, _ := filepath.EvalSymlinks(t.TempDir())
	if _, ok := WalkUp(noGit); ok {
		t.Skip("a .git above the temporary directory")
	}
	for name, c := range map[string]client{
		"unknown client directory": {},
		"relative cwd ignored":     {Cwd: "some/where"},
		"no .git above":            {Cwd: noGit},
		"missing directory":        {Cwd: filepath.Join(noGit, "gone")},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := find("", c)
			var re *Error
			if !errors.As(err, &re) || re.Explicit || !errors.Is(err, ErrNotFound) || re.Reason == "" {
				t.Fatalf("Find = %v; want a *Error", err)
			}
		})
	}
}

// FindRepository refuses an explicit directory in no repository, where Find
// takes it as a plain directory; inside a repository both give its root.
func TestFindRepository(t *testing.T) {
	root := tree(t)
	plain, _ := filepath.EvalSymlinks(t.TempDir())
	if got, err := FindRepository(filepath.Join(root, "a", "b"), "", nil); err != nil || got != root {
		t.Fatalf("nested: %q %v", got, err)
	}
	_, err := FindRepository(plain, "", nil)
	var re *Error
	if !errors.As(err, &re) || !re.Explicit || !strings.Contains(re.Reason, "not inside a git repository") {
		t.Fatalf("plain directory: %v", err)
	}
	if got, err := Find(plain, "", nil); err != nil || got != plain {
		t.Fatalf("Find of a plain directory: %q %v", got, err)
	}
}

// NeedsRoots: a call needs the client's roots only when its arguments name
// no repo_path and the client's directory is in no repository.
func TestNeedsRoots(t *testing.T) {
	inRepo := t.TempDir()
	if err := os.Mkdir(filepath.Join(inRepo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(inRepo, "a", "b")
	os.MkdirAll(sub, 0o755)
	plain := t.TempDir()
	for _, c := range []struct {
		args, cwd string
		want      bool
	}{
		{`{}`, plain, true},
		{`{}`, "", true},
		{`{"repo_path":""}`, plain, true},
		{`{"repo_path":7}`, plain, true},
		{`{"repo_path":"/x"}`, plain, false},
		{`{}`, inRepo, false},
		{`{}`, sub, false},
		{`[]`, inRepo, false},
	} {
		doc, err := jsonval.Parse([]byte(c.args))
		if err != nil {
			t.Fatal(err)
		}
		if got := NeedsRoots(doc, c.cwd); got != c.want {
			t.Errorf("%s in %q: %v, want %v", c.args, c.cwd, got, c.want)
		}
	}
	if !NeedsRoots(nil, plain) || NeedsRoots(nil, inRepo) {
		t.Error("no arguments")
	}
}
