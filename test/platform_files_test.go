//go:build unix

package test

import (
	"bufio"
	"go/build/constraint"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// maxComplementFiles bounds the `_other` files, `_other_test.go` ones and
// the mains' two guards included: each other one is a system left out of
// a mechanism, and a default in the common file is the better place for
// one where it removes the file (docs/development.md, "Platform files").
const maxComplementFiles = 11

// supported are the systems hearth builds for (decision 0069); a main
// package's guard, platformGuard, stops a build for any other.
var supported = []string{"linux", "darwin", "windows"}

// guardLine and guardPackage are a main package's platform_other.go: its
// line the complement of supported, its package clause different from
// the directory's so that the go command stops at loading with one error
// that names the reason.
const (
	guardLine    = "!linux && !darwin && !windows"
	guardPackage = "hearth_builds_only_for_linux_darwin_and_windows"
)

// guarded are the main packages hearth ships, each with its guard.
var guarded = []string{"daemon/hearthd", "shim/hearth"}

// builtFor reports whether a build line (possibly "") selects goos,
// with every tag that is not a system (race, a feature tag) set or with
// none set.
func builtFor(t *testing.T, line, goos string) bool {
	if line == "" {
		return true
	}
	expr, err := constraint.Parse("//go:build " + line)
	if err != nil {
		t.Fatalf("build line %q: %v", line, err)
	}
	for _, others := range []bool{false, true} {
		if expr.Eval(func(tag string) bool {
			if tag == "unix" || slices.Contains(systems, tag) {
				return tag == goos || tag == "unix" && unixSystem(goos)
			}
			return others
		}) {
			return true
		}
	}
	return false
}

// packageClause is a Go file's package name.
func packageClause(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(line, "package "); ok {
			return strings.TrimSpace(name)
		}
	}
	return ""
}

// systems are Go's GOOS file suffixes hearth names files with, and unix,
// the build tag Go has no suffix for.
var systems = []string{"linux", "darwin", "windows", "freebsd", "openbsd", "netbsd", "dragonfly", "solaris", "illumos", "aix", "plan9", "js", "wasip1", "android", "ios"}

// unixSystem: the GOOS values Go's unix tag covers.
func unixSystem(goos string) bool {
	return goos != "windows" && goos != "plan9" && goos != "js" && goos != "wasip1"
}

// buildLine is a Go file's //go:build expression ("" when it has none).
func buildLine(t *testing.T, path string) string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if expr, ok := strings.CutPrefix(line, "//go:build "); ok {
			return strings.TrimSpace(expr)
		}
		if strings.HasPrefix(line, "package ") {
			break
		}
	}
	return ""
}

// terms splits an expression of && into its terms, sorted.
func terms(expr string) []string {
	var out []string
	for _, t := range strings.Split(expr, "&&") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// namesSystem reports whether expr names a system (a GOOS or unix).
func namesSystem(expr string) bool {
	for _, f := range strings.FieldsFunc(expr, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
		if f == "unix" || slices.Contains(systems, f) {
			return true
		}
	}
	return false
}

// splitName is a file's stem and the system its name says ("" for none).
func splitName(name string) (stem, system string) {
	base := strings.TrimSuffix(strings.TrimSuffix(name, ".go"), "_test")
	i := strings.LastIndexByte(base, '_')
	if i < 0 {
		return base, ""
	}
	suffix := base[i+1:]
	if suffix == "unix" || suffix == "other" || slices.Contains(systems, suffix) {
		return base[:i], suffix
	}
	return base, ""
}

// TestPlatformFilesByName holds every source file of the module to the
// rule docs/development.md states: a file's name says which systems it
// serves, and its build line agrees.
func TestPlatformFilesByName(t *testing.T) {
	root := mustAbs(t, "..")
	dirs := map[string][]string{}
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], filepath.Base(path))
		}
		return nil
	})
	complements := 0
	var listed []string
	for dir, names := range dirs {
		rel, _ := filepath.Rel(root, dir)
		if rel == "test" || strings.HasPrefix(rel, "test/") {
			continue // the end-to-end tests say what they need
		}
		lines := map[string]string{}
		var sources []string
		for _, n := range names {
			lines[n] = buildLine(t, filepath.Join(dir, n))
			if !strings.HasSuffix(n, "_test.go") {
				sources = append(sources, n)
			}
		}
		// A package written for one system: every source file the same line.
		oneSystem := len(sources) > 0 && lines[sources[0]] != ""
		for _, n := range sources {
			oneSystem = oneSystem && lines[n] == lines[sources[0]]
		}
		// What each stem's named files serve.
		served := map[string][]string{}
		for _, n := range sources {
			if stem, sys := splitName(n); sys != "" && sys != "other" {
				served[stem] = append(served[stem], sys)
			}
		}
		guard := slices.Contains(guarded, filepath.ToSlash(rel))
		if guard && (lines["platform_other.go"] != guardLine || packageClause(t, filepath.Join(dir, "platform_other.go")) != guardPackage) {
			t.Errorf("%s: a main package hearth ships has platform_other.go, //go:build %s, package %s: building it for a system hearth does not support fails with that one error", rel, guardLine, guardPackage)
		}
		for _, n := range names {
			if strings.HasSuffix(n, "_other_test.go") {
				complements++
				listed = append(listed, filepath.Join(rel, n))
			}
		}
		for _, n := range sources {
			path, line := filepath.Join(rel, n), lines[n]
			stem, sys := splitName(n)
			if guard && n == "platform_other.go" {
				complements++
				listed = append(listed, path)
				continue
			}
			if line != "ignore" && !slices.ContainsFunc(supported, func(goos string) bool { return builtFor(t, line, goos) }) {
				t.Errorf("%s: built for %q, none of the systems hearth builds for (Linux, macOS, Windows; decision 0069): delete it; a main package's platform_other.go stops a build elsewhere", path, line)
				continue
			}
			switch {
			case sys == "other":
				complements++
				listed = append(listed, path)
				// The negation of what the stem's files serve (a system a
				// _unix sibling serves goes unsaid), or, where a _windows
				// sibling serves Windows, the Unix systems no sibling
				// serves (unix && !X).
				want, unixOnly := []string{}, []string{"unix"}
				for _, s := range served[stem] {
					if !slices.Contains(served[stem], "unix") || s == "unix" || s == "windows" || !unixSystem(s) {
						want = append(want, "!"+s)
					}
					if s != "windows" {
						unixOnly = append(unixOnly, "!"+s)
					}
				}
				sort.Strings(want)
				sort.Strings(unixOnly)
				if slices.Contains(served[stem], "windows") && slices.Equal(terms(line), unixOnly) {
					break
				}
				if len(want) == 0 {
					// No sibling: what its common file leaves out.
					if line != "!unix" && line != "!windows" {
						t.Errorf("%s: an _other file without a sibling serves what its common file leaves out (!unix, !windows); its line is %q", path, line)
					}
				} else if !slices.Equal(terms(line), want) {
					t.Errorf("%s: an _other file serves every system its stem's other files do not: //go:build %s, not %q", path, strings.Join(want, " && "), line)
				}
			case sys == "unix":
				ts := terms(line)
				if len(ts) == 0 || ts[len(ts)-1] != "unix" && !slices.Contains(ts, "unix") {
					t.Errorf("%s: a _unix file's line is unix (or unix && !X for a system X with its own %s_X file), not %q", path, stem, line)
					continue
				}
				for _, term := range ts {
					if term != "unix" && !(strings.HasPrefix(term, "!") && slices.Contains(served[stem], term[1:])) {
						t.Errorf("%s: %q in a _unix file's line names no system with its own %s_%s.go", path, term, stem, strings.TrimPrefix(term, "!"))
					}
				}
			case sys != "":
				if line != "" && !slices.Contains(terms(line), sys) {
					t.Errorf("%s: a _%s file is built for %s alone (Go's own rule); its line %q says otherwise", path, sys, sys, line)
				}
			case line != "" && namesSystem(line) && !oneSystem && line != "unix || windows":
				t.Errorf("%s: built for %q, but its name says no system: name it _linux, _darwin, _windows, _unix or _other (docs/development.md, \"Platform files\")", path, line)
			}
		}
	}
	sort.Strings(listed)
	t.Logf("%d _other files: %s", complements, strings.Join(listed, " "))
	if complements > maxComplementFiles {
		t.Errorf("%d _other files, more than %d: put the default in the common file where that removes one", complements, maxComplementFiles)
	}
}
