package repo

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/tool"
)

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
	got, err := Find("", tool.Client{Cwd: filepath.Join(root, "a", "b")})
	if err != nil || got != root {
		t.Fatalf("Find = %q, %v; want %q", got, err, root)
	}
}

func TestFindUsesRootsWhenThereIsNoHello(t *testing.T) {
	root := tree(t)
	got, err := Find("", tool.Client{Roots: []string{"relative/ignored", filepath.Join(root, "a")}})
	if err != nil || got != root {
		t.Fatalf("Find = %q, %v; want %q", got, err, root)
	}
}

func TestRootsComeBeforeTheHello(t *testing.T) {
	// An editor started the shim in / but declared its workspace as a root.
	root := tree(t)
	got, err := Find("", tool.Client{Cwd: "/", Roots: []string{filepath.Join(root, "a")}})
	if err != nil || got != root {
		t.Fatalf("Find = %q, %v; want %q", got, err, root)
	}
}

func TestFindAcceptsAGitFile(t *testing.T) {
	// Worktrees and submodules have a .git file, not a directory.
	root, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: /elsewhere\n"), 0o644)
	got, err := Find("", tool.Client{Cwd: root})
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
		client     tool.Client
		want       string
		wantErr    bool
	}{
		{"absolute", root, tool.Client{}, root, false},
		{"nested is used as given", filepath.Join(root, "a"), tool.Client{}, filepath.Join(root, "a"), false},
		{"without .git", plain, tool.Client{}, plain, false},
		{"symlink resolved", link, tool.Client{}, root, false},
		{"relative to the client", "a/b", tool.Client{Cwd: root}, filepath.Join(root, "a", "b"), false},
		{"relative, client unknown", "a/b", tool.Client{}, "", true},
		{"missing", filepath.Join(root, "nope"), tool.Client{}, "", true},
		{"a file", file, tool.Client{}, "", true},
		{"NUL byte", root + "\x00x", tool.Client{}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Find(c.path, c.client)
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
	for name, c := range map[string]tool.Client{
		"unknown client directory": {},
		"relative cwd ignored":     {Cwd: "some/where"},
		"no .git above":            {Cwd: noGit},
		"missing directory":        {Cwd: filepath.Join(noGit, "gone")},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Find("", c)
			var re *Error
			if !errors.As(err, &re) || re.Explicit || !errors.Is(err, ErrNotFound) || re.Reason == "" {
				t.Fatalf("Find = %v; want a *Error", err)
			}
		})
	}
}
