package guard

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Most tests here pin one rule of the version guard (what it must do, or must
// never do); the comment above each test states the rule.

const build = "0.1.0+test"

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// refusal returns the *Error in err, failing the test when there is none.
func refusal(t *testing.T, err error) *Error {
	t.Helper()
	var ge *Error
	if !errors.As(err, &ge) {
		t.Fatalf("want a *guard.Error refusal, got %v", err)
	}
	return ge
}

// treeHash describes every entry under dir, hidden ones included: the
// content hash of each file, the target of each link, the mode and
// modification time of everything. Two equal results mean nothing was
// created, removed, written or touched.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if lockLeavesFile && d.Name() == lockName {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		what := ""
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			what = fmt.Sprintf("%x", sha256.Sum256(b))
		case fi.Mode()&fs.ModeSymlink != 0:
			what, _ = os.Readlink(p)
		}
		lines = append(lines, fmt.Sprintf("%s %v %d %s", p, fi.Mode(), fi.ModTime().UnixNano(), what))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// A home in another format (older or newer MAJOR.MINOR) is refused with exit
// 78, and the message names both formats, both hearthd versions, the home,
// the explicit `hearthd migrate` step and what to do, and says that nothing
// was changed.
func TestVersionMismatchExitCode(t *testing.T) {
	older := Version{0, 9}
	steps := []Step{{From: older, To: current, What: "test", Run: func(string) error { return nil }}}
	cases := []struct {
		name   string
		onDisk string
		steps  []Step
		todo   string // what the message must tell the user to do
	}{
		{"newer major", "2.0", nil, "upgrade hearthd to a release that reads format 2.0"},
		{"newer minor", "1.1", nil, "upgrade hearthd"},
		{"older with a migration", "0.9", steps, "Back it up, then run `hearthd migrate`"},
		{"older without a migration", "0.9", nil, "`hearthd migrate` cannot convert it (no migration step from format 0.9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			writeFile(t, filepath.Join(home, MarkerName), c.onDisk+"\n9.9.9+writer\n")
			_, err := check(home, current, build, c.steps)
			ge := refusal(t, err)
			if ge.ExitCode != 78 || ge.Reason != ReasonFormatMismatch || ge.Found != c.onDisk || ge.Want != Format || ge.Home != home {
				t.Fatalf("refusal %+v", ge)
			}
			// Both versions (format and release), the home, the explicit
			// step and what to do.
			for _, want := range []string{"format " + c.onDisk + " (written by hearthd 9.9.9+writer)", "reads format " + Format,
				"hearthd " + build, home, "hearthd migrate", "Nothing was changed", c.todo} {
				if !strings.Contains(ge.Message, want) {
					t.Errorf("message lacks %q:\n%s", want, ge.Message)
				}
			}
			if err.Error() != ge.Message {
				t.Errorf("Error() %q differs from Message", err.Error())
			}
		})
	}
}

// A fresh home gets the marker (line 1 the format, line 2 the hearthd
// version; home 0700, marker 0600) and nothing else; a later check by another
// release reads it without rewriting it.
func TestFreshInstallCreatesMarker(t *testing.T) {
	home := filepath.Join(t.TempDir(), "new", "home")
	res, err := Check(home, build)
	if err != nil || !res.Created || res.Format != current || res.WrittenBy != build || res.Build != build || res.Home != home {
		t.Fatalf("%+v %v", res, err)
	}
	// Line 1 is the format MAJOR.MINOR, line 2 the full hearthd version.
	if got := readFile(t, filepath.Join(home, MarkerName)); got != Format+"\n"+build+"\n" {
		t.Fatalf("marker %q", got)
	}
	if fi, _ := os.Stat(home); fi.Mode().Perm() != 0o700 {
		t.Errorf("home mode %v, want 0700", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Join(home, MarkerName)); fi.Mode().Perm() != 0o600 {
		t.Errorf("marker mode %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(home)
	for _, e := range entries {
		if e.Name() != MarkerName && e.Name() != lockName {
			t.Errorf("the fresh home holds %s besides the marker", e.Name())
		}
	}
	res, err = Check(home, "0.2.0+next")
	if err != nil || res.Created || res.WrittenBy != build || res.Build != "0.2.0+next" {
		t.Fatalf("second check: %+v %v", res, err)
	}
}

// A home holding only dot entries (the guard's own leftovers, desktop
// litter) is fresh; the marker is written.
func TestDotEntriesAreNotData(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".DS_Store"), "x")
	writeFile(t, filepath.Join(home, ".format_version.12345"), "half-written temp file of a crashed writer")
	if res, err := Check(home, build); err != nil || !res.Created {
		t.Fatalf("%+v %v", res, err)
	}
}

// Data without a marker (any non-dot entry: a store, its log, an index,
// even an empty directory or a dangling symlink) is refused with exit 65; the
// message names what was found and `hearthd migrate --adopt`, and the home is
// left as it was.
func TestLegacyDatabaseExitCode(t *testing.T) {
	cases := []struct {
		name  string
		make  func(t *testing.T, home string)
		names string
	}{
		{"memory store", func(t *testing.T, h string) { writeFile(t, filepath.Join(h, "memory.db"), "SQLite format 3\x00") }, "memory.db"},
		{"write-ahead log only", func(t *testing.T, h string) { writeFile(t, filepath.Join(h, "memory.db-wal"), "wal") }, "memory.db-wal"},
		{"index directory", func(t *testing.T, h string) { writeFile(t, filepath.Join(h, "index", "a.db"), "i") }, "index"},
		{"empty directory", func(t *testing.T, h string) { os.Mkdir(filepath.Join(h, "index"), 0o700) }, "index"},
		{"symlink", func(t *testing.T, h string) { os.Symlink("/nonexistent", filepath.Join(h, "memory.db")) }, "memory.db"},
		{"many entries", func(t *testing.T, h string) {
			for i := 0; i < 8; i++ {
				writeFile(t, filepath.Join(h, fmt.Sprintf("f%d", i)), "x")
			}
		}, "f0, f1, f2, f3, f4 and 3 more"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			c.make(t, home)
			before := treeHash(t, home)
			_, err := Check(home, build)
			ge := refusal(t, err)
			if ge.ExitCode != 65 || ge.Reason != ReasonNoMarker || ge.Found != "" {
				t.Fatalf("refusal %+v", ge)
			}
			for _, want := range []string{c.names, MarkerName, "Nothing was changed", "hearthd migrate --adopt", "HEARTH_HOME"} {
				if !strings.Contains(ge.Message, want) {
					t.Errorf("message lacks %q:\n%s", want, ge.Message)
				}
			}
			if after := treeHash(t, home); after != before {
				t.Fatalf("the guard changed a legacy home:\nbefore\n%s\nafter\n%s", before, after)
			}
		})
	}
}

// The guard runs before any store is opened, the home side: every kind of
// refusal leaves the home exactly as it was: no file created, removed,
// rewritten or touched, hidden or not.
func TestRefusedHomeIsUntouched(t *testing.T) {
	cases := map[string]string{
		"newer format":   "2.0\n2.0.0\n",
		"older format":   "0.9\n0.0.9\n",
		"corrupt marker": "garbage\n",
		"no marker":      "",
	}
	for name, marker := range cases {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			if marker != "" {
				writeFile(t, filepath.Join(home, MarkerName), marker)
			}
			writeFile(t, filepath.Join(home, "memory.db"), "precious")
			writeFile(t, filepath.Join(home, "memory.db-wal"), "log")
			writeFile(t, filepath.Join(home, "index", "repo", "a.idx"), "index")
			writeFile(t, filepath.Join(home, ".hidden"), "user file")
			before := treeHash(t, home)
			if _, err := Check(home, build); refusal(t, err) == nil {
				t.Fatal("passed")
			}
			if after := treeHash(t, home); after != before {
				t.Fatalf("refused home changed:\nbefore\n%s\nafter\n%s", before, after)
			}
		})
	}
}

// Checks run under an exclusive lock: of many concurrent checkers of one
// fresh home (goroutines here), exactly one writes the marker and all read
// that one.
func TestLockExcludesGoroutines(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home") // not there yet: they race to create it too
	const n = 32
	results := make([]Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = Check(home, fmt.Sprintf("0.1.0+g%d", i))
		}()
	}
	wg.Wait()
	creator := -1
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("checker %d: %v", i, errs[i])
		}
		if results[i].Created {
			if creator >= 0 {
				t.Fatalf("checkers %d and %d both wrote the marker", creator, i)
			}
			creator = i
		}
	}
	if creator < 0 {
		t.Fatal("no checker wrote the marker")
	}
	want := fmt.Sprintf("%s\n0.1.0+g%d\n", Format, creator)
	if got := readFile(t, filepath.Join(home, MarkerName)); got != want {
		t.Fatalf("marker %q, want the creator's %q", got, want)
	}
	for i := range n {
		if results[i].WrittenBy != fmt.Sprintf("0.1.0+g%d", creator) {
			t.Errorf("checker %d saw the marker as written by %q", i, results[i].WrittenBy)
		}
	}
}

// TestLockExcludesProcesses re-executes this test binary as
// separate processes that check one fresh home at once: exactly one writes
// the marker, and every process reads the same whole marker afterwards.
func TestLockExcludesProcesses(t *testing.T) {
	if home := os.Getenv("GUARD_CHILD_HOME"); home != "" {
		res, err := Check(home, "0.1.0+p"+os.Getenv("GUARD_CHILD_N"))
		if err != nil {
			fmt.Printf("error: %v\n", err)
			os.Exit(3)
		}
		b, err := os.ReadFile(filepath.Join(home, MarkerName))
		if err != nil {
			fmt.Printf("error: %v\n", err)
			os.Exit(3)
		}
		fmt.Printf("created=%v marker=%q\n", res.Created, b)
		os.Exit(0)
	}
	home := filepath.Join(t.TempDir(), "home")
	const n = 8
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestLockExcludesProcesses$")
			cmd.Env = append(os.Environ(), "GUARD_CHILD_HOME="+home, fmt.Sprintf("GUARD_CHILD_N=%d", i))
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("child %d: %v %s", i, err, out)
			}
			outs[i] = strings.TrimSpace(string(out))
		}()
	}
	wg.Wait()
	marker := readFile(t, filepath.Join(home, MarkerName))
	creators := 0
	for i, out := range outs {
		if strings.HasPrefix(out, "created=true ") {
			creators++
			if want := fmt.Sprintf("%s\n0.1.0+p%d\n", Format, i); marker != want {
				t.Errorf("marker %q was not written by its creator %d (%q)", marker, i, want)
			}
		}
		if !strings.HasSuffix(out, fmt.Sprintf("marker=%q", marker)) {
			t.Errorf("child %d read another marker than the final one: %s", i, out)
		}
	}
	if creators != 1 {
		t.Fatalf("%d processes wrote the marker:\n%s", creators, strings.Join(outs, "\n"))
	}
	entries, _ := os.ReadDir(home)
	for _, e := range entries {
		if e.Name() != MarkerName && e.Name() != lockName {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// The Windows lock (LockFileEx, lock_windows.go) must at least compile and
// pass vet for both Windows architectures, since no Windows runner tests it.
func TestWindowsLockCompiles(t *testing.T) {
	gobin := goTool(t)
	for _, arch := range []string{"amd64", "arm64"} {
		cmd := exec.Command(gobin, "vet", ".")
		cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH="+arch, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("GOOS=windows GOARCH=%s go vet: %v\n%s", arch, err, out)
		}
	}
}

// The home is $HEARTH_HOME (cleaned, and it must be absolute), else
// ~/.local/share/hearth, whatever XDG_DATA_HOME says
// (docs/decisions/0029-one-place-per-user.md).
func TestHomeFromEnvironment(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
		err  string
	}{
		{env: map[string]string{"HEARTH_HOME": "/data/h", "XDG_DATA_HOME": "/x", "HOME": "/home/u"}, want: "/data/h"},
		{env: map[string]string{"HEARTH_HOME": "/data/h/../h2/", "HOME": "/home/u"}, want: "/data/h2"},
		{env: map[string]string{"HEARTH_HOME": "data", "HOME": "/home/u"}, err: `HEARTH_HOME="data" is not an absolute path`},
		{env: map[string]string{"HEARTH_HOME": "~/h", "HOME": "/home/u"}, err: "not an absolute path"},
		{env: map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/home/u"}, want: "/home/u/.local/share/hearth"},
		{env: map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/home/u"}, want: "/home/u/.local/share/hearth"},
		{env: map[string]string{"HOME": "/home/u"}, want: "/home/u/.local/share/hearth"},
	}
	for _, c := range cases {
		got, err := Home(func(k string) string { return c.env[k] })
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: want error %q, got %q %v", c.env, c.err, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%v: got %q %v, want %q", c.env, got, err, c.want)
		}
	}
	// Through the real environment, as hearthd calls it.
	dir := t.TempDir()
	t.Setenv("HEARTH_HOME", dir)
	if got, err := Home(os.Getenv); err != nil || got != dir {
		t.Fatalf("Home(os.Getenv) = %q %v, want %q", got, err, dir)
	}
}

// Another hearthd release of the same format passes, and a passing check
// rewrites nothing.
func TestPatchVersionDifferenceAllowed(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, MarkerName), Format+"\n0.1.0+old\n")
	writeFile(t, filepath.Join(home, "memory.db"), "x")
	before := treeHash(t, home)
	for _, b := range []string{"0.1.0+old", "0.1.7+new", "0.9.0"} {
		res, err := Check(home, b)
		if err != nil || res.Created || res.WrittenBy != "0.1.0+old" || res.Build != b {
			t.Fatalf("hearthd %s on format %s: %+v %v", b, Format, res, err)
		}
	}
	if treeHash(t, home) != before {
		t.Fatal("a passing check rewrote the home")
	}
}

// Any other MAJOR.MINOR, a minor difference included, is refused with exit 78.
func TestMinorVersionDifferenceRefused(t *testing.T) {
	for _, onDisk := range []string{"1.1", "1.2", "1.10", "0.0", "2.0"} {
		home := t.TempDir()
		writeFile(t, filepath.Join(home, MarkerName), onDisk+"\n"+build+"\n")
		_, err := Check(home, build)
		if ge := refusal(t, err); ge.ExitCode != ExitConfig || ge.Found != onDisk {
			t.Errorf("%s: %+v", onDisk, ge)
		}
	}
}

// A passed check says what it found, for the daemon's log: fresh home and
// marker written, or the format on disk and which hearthd wrote it and runs.
func TestSuccessfulCheckLogged(t *testing.T) {
	home := t.TempDir()
	res, err := Check(home, "0.1.0+a")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"format_version check passed", "fresh home " + home, "marker written", "format " + Format, "hearthd 0.1.0+a"} {
		if !strings.Contains(res.String(), want) {
			t.Errorf("fresh: %q lacks %q", res.String(), want)
		}
	}
	res, err = Check(home, "0.1.1+b")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"format_version check passed", "home " + home, "has format " + Format, "written by hearthd 0.1.0+a", "running hearthd 0.1.1+b"} {
		if !strings.Contains(res.String(), want) {
			t.Errorf("existing: %q lacks %q", res.String(), want)
		}
	}
}

// There is no warning-only mode: a mismatch is always an error. No variable
// weakens it, and the package reads no environment at all (Home is handed its
// getenv), so no future "HEARTH_GUARD=warn" can slip in unnoticed.
func TestNoWarningOnlyMode(t *testing.T) {
	for _, k := range []string{"HEARTH_GUARD", "HEARTH_SKIP_VERSION_CHECK", "HEARTH_FORCE", "HEARTH_VERSION_GUARD", "PIXELTABLE_SKIP_GUARD"} {
		t.Setenv(k, "warn")
	}
	home := t.TempDir()
	writeFile(t, filepath.Join(home, MarkerName), "3.0\n3.0.0\n")
	res, err := Check(home, build)
	if ge := refusal(t, err); ge.ExitCode != ExitConfig || res != (Result{}) {
		t.Fatalf("a mismatch passed or half-passed: %+v %+v", res, ge)
	}

	// Every non-test file, whatever its build constraints.
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("list the package's files: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" && strings.Contains("Getenv LookupEnv Environ ExpandEnv", sel.Sel.Name) {
					t.Errorf("%s: the guard reads the environment (os.%s)", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}

// There is no automatic migration: Check never migrates, even when a
// migration exists; only the explicit Migrate does.
func TestCheckNeverMigrates(t *testing.T) {
	ran := 0
	steps := []Step{{From: Version{0, 9}, To: current, What: "test step", Run: func(string) error { ran++; return nil }}}
	home := t.TempDir()
	writeFile(t, filepath.Join(home, MarkerName), "0.9\n0.0.9\n")
	writeFile(t, filepath.Join(home, "memory.db"), "old data")
	before := treeHash(t, home)
	for range 3 {
		if _, err := check(home, current, build, steps); refusal(t, err).ExitCode != ExitConfig {
			t.Fatal(err)
		}
	}
	if ran != 0 || treeHash(t, home) != before {
		t.Fatalf("Check migrated: ran=%d, home changed=%v", ran, treeHash(t, home) != before)
	}
	res, err := migrate(home, current, build, steps, MigrateOptions{})
	if err != nil || ran != 1 || len(res.Steps) != 1 || !strings.Contains(res.String(), "0.9 -> "+Format+": test step") {
		t.Fatalf("explicit migrate: %v %v ran=%d", res, err, ran)
	}
	if _, err := check(home, current, build, steps); err != nil {
		t.Fatalf("after migrate: %v", err)
	}
}

func TestCheckRejectsBadBuildVersion(t *testing.T) {
	for _, b := range []string{"", "0.1\n1.0", "bell\a", strings.Repeat("v", 201)} {
		home := filepath.Join(t.TempDir(), "h")
		if _, err := Check(home, b); err == nil {
			t.Errorf("build %q accepted", b)
		}
		if _, err := os.Stat(home); err == nil {
			t.Errorf("build %q: home created before the argument was checked", b)
		}
	}
}

func TestCheckAndMigrateRejectRelativeHome(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, home := range []string{"", "rel", "./x"} {
		if _, err := Check(home, build); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
			t.Errorf("Check(%q): %v", home, err)
		}
		if _, err := Migrate(home, build, MigrateOptions{}); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
			t.Errorf("Migrate(%q): %v", home, err)
		}
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Errorf("created %v in the working directory", entries)
	}
}

func TestCheckHomeIsAFile(t *testing.T) {
	home := filepath.Join(t.TempDir(), "file")
	writeFile(t, home, "x")
	_, err := Check(home, build)
	var ge *Error
	if err == nil || errors.As(err, &ge) || !strings.Contains(err.Error(), home) {
		t.Fatalf("want a plain error naming %s, got %v", home, err)
	}
}

// goTool finds the go command for tests that ask it about this package.
func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if p := "/usr/local/go/bin/go"; fileExists(p) {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("the go command is not available")
	}
	t.Skip("the go command is not available")
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// BenchmarkCheck is the guard's share of hearthd's start on a home that
// already has its marker (the common case).
func BenchmarkCheck(b *testing.B) {
	home := b.TempDir()
	if _, err := Check(home, build); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Check(home, build); err != nil {
			b.Fatal(err)
		}
	}
}
