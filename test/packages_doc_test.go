//go:build unix

package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The module's packages are described once: docs/architecture.md's table of
// layers and packages holds every package but the end-to-end tests, the
// benchmarks and their helper programs (test/...) and the release tool
// (tools/...), which docs/development.md's layout holds with the rest of the
// repository that is not a package (test data, the TypeScript side, docs).
// outsideArchitecture says which packages go to development.md.
func outsideArchitecture(pkg string) bool {
	return pkg == "test" || strings.HasPrefix(pkg, "test/") || strings.HasPrefix(pkg, "tools/")
}

// modulePackages are `go list ./...`'s packages, relative to the module
// root ("pkg/mcp", "daemon"); the root package, if any, is ".".
func modulePackages(t *testing.T) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	needOrSkip(t, err == nil, "the go command")
	cmd := exec.Command(gobin, "list", "-e", "-f", "{{.Module.Path}} {{.ImportPath}}", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var pkgs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		mod, imp, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(imp, mod) {
			t.Fatalf("go list ./... printed %q", line)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(imp, mod), "/")
		if rel == "" {
			rel = "."
		}
		pkgs = append(pkgs, rel)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list ./... listed only %v", pkgs)
	}
	return pkgs
}

// tableNames are the backquoted names in column col (from 0) of the
// Markdown table under the heading `heading` of a docs file, each with the
// line it is on; a trailing slash is dropped ("test/ts/" is "test/ts").
func tableNames(t *testing.T, file, heading string, col int) map[string]int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	start := slices.Index(lines, heading)
	if start < 0 {
		t.Fatalf("%s has no heading %q", file, heading)
	}
	names := map[string]int{}
	rows, inTable := 0, false
	for i := start + 1; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "#") {
			break
		}
		if !strings.HasPrefix(l, "|") {
			if inTable {
				break // the table ended: one table per section
			}
			continue
		}
		inTable = true
		cells := strings.Split(strings.ReplaceAll(l, `\|`, ""), "|")
		if len(cells) <= col+1 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		rows++
		if rows == 1 {
			continue // the header
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[col+1], -1) {
			names[strings.TrimSuffix(m[1], "/")] = i + 1
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s: no names found in the table under %q (column %d)", file, heading, col+1)
	}
	return names
}

// TestPackageTables: docs/architecture.md's table names every package of
// `go list ./...` but those outsideArchitecture, and development.md's layout
// those; neither names a package that does not exist, and no package is in
// both (a fact kept once). A package added, renamed or removed fails here
// until the table says so.
func TestPackageTables(t *testing.T) {
	pkgs := modulePackages(t)
	arch := tableNames(t, "docs/architecture.md", "## Layers and packages", 1)
	dev := tableNames(t, "docs/development.md", "## Layout", 0)
	exists := map[string]bool{}
	for _, p := range pkgs {
		exists[p] = true
		switch inArch, inDev := arch[p] > 0, dev[p] > 0; {
		case inArch && inDev:
			t.Errorf("package %s is in both docs/architecture.md's table (line %d) and docs/development.md's (line %d): keep it once", p, arch[p], dev[p])
		case outsideArchitecture(p) && !inDev:
			t.Errorf("package %s is not in docs/development.md's layout table: add a row saying what it is", p)
		case !outsideArchitecture(p) && !inArch:
			t.Errorf("package %s is not in docs/architecture.md's table of layers and packages: add it, by its full path, in its layer", p)
		}
	}
	for name, line := range arch {
		switch {
		case !exists[name]:
			t.Errorf("docs/architecture.md:%d names package %s, which go list ./... does not list (renamed or removed?)", line, name)
		case outsideArchitecture(name):
			t.Errorf("docs/architecture.md:%d names %s, which docs/development.md's layout holds", line, name)
		}
	}
	for name, line := range dev {
		if exists[name] {
			continue
		}
		// Not a package: test data, a directory or a file of the repository.
		if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(name))); err != nil {
			t.Errorf("docs/development.md:%d names %s, which is neither a package nor a path of the repository", line, name)
		}
	}
}

// TestTableNames pins the table reading TestPackageTables relies on.
func TestTableNames(t *testing.T) {
	dir := t.TempDir()
	doc := "# X\n\n## Layout\n\nIntro with `not/this`.\n\n| path | what |\n|---|---|\n| `a/b/`, `c` | one `not/col2` \\| x |\n| `d` | two |\n\nAfter `nor/this`.\n\n## Next\n\n| `e` | f |\n"
	if err := os.WriteFile(filepath.Join(dir, "doc.md"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(mustAbs(t, ".."), filepath.Join(dir, "doc.md"))
	if err != nil {
		t.Fatal(err)
	}
	got := tableNames(t, filepath.ToSlash(rel), "## Layout", 0)
	if len(got) != 3 || got["a/b"] == 0 || got["c"] == 0 || got["d"] == 0 {
		t.Errorf("tableNames = %v, want a/b, c and d", got)
	}
}

// TestExecImportersDocumented: docs/architecture.md's "Processes start in"
// statement names, in backquotes, every package of the module that imports
// os/exec on Linux, macOS or Windows (test packages under test/ apart), and
// no other.
func TestExecImportersDocumented(t *testing.T) {
	gobin, err := exec.LookPath("go")
	needOrSkip(t, err == nil, "the go command")
	importers := map[string]bool{}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command(gobin, "list", "-e", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "GOOS="+goos)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list: %v", goos, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 || !slices.Contains(fields[1:], "os/exec") {
				continue
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(fields[0], "github.com/hearth-mcp/hearth"), "/")
			if rel != "test" && !strings.HasPrefix(rel, "test/") {
				importers[rel] = true
			}
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "- **Processes start in")
	if !ok {
		t.Fatal(`docs/architecture.md has no "- **Processes start in" statement`)
	}
	statement, _, _ := strings.Cut(rest, "\n- ")
	named := map[string]bool{}
	for i, part := range strings.Split(statement, "`") {
		if i%2 == 1 && (part == "shim" || strings.HasPrefix(part, "pkg/") || strings.HasPrefix(part, "daemon/") || strings.HasPrefix(part, "tools/")) {
			named[part] = true
		}
	}
	for p := range importers {
		if !named[p] {
			t.Errorf("%s imports os/exec, and docs/architecture.md's \"Processes start in\" statement does not name it", p)
		}
	}
	for p := range named {
		if !importers[p] {
			t.Errorf("docs/architecture.md's \"Processes start in\" statement names %s, which does not import os/exec", p)
		}
	}
}
