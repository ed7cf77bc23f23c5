//go:build unix

package test

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// docFiles are README.md and every Markdown file under docs/, as paths
// relative to the repository root, with slashes.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join("..", "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel("..", p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var (
	fenceLine  = regexp.MustCompile("^\\s*(```|~~~)")
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	headingRE  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	inlineLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// proseLines are a Markdown file's lines outside fenced blocks (which hold
// neither links nor headings).
func proseLines(text string) []string {
	var out []string
	inFence := false
	for _, l := range strings.Split(text, "\n") {
		if fenceLine.MatchString(l) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		out = append(out, l)
	}
	return out
}

// githubAnchor is the anchor GitHub gives a heading: its text (a link's
// label for a link) lower-cased, every character but letters, digits,
// spaces, '-' and '_' dropped, spaces turned to '-'.
func githubAnchor(heading string) string {
	heading = inlineLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// anchorsOf are the anchors of a Markdown file's headings; a repeated
// heading gets -1, -2, ... as on GitHub.
func anchorsOf(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range proseLines(text) {
		m := headingRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		a := githubAnchor(m[1])
		if n := seen[a]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// TestDocsLinks: every relative link of README.md and docs/**/*.md names a
// file or directory of the repository, and a link to #anchor in a Markdown
// file names one of its headings, so moving a section cannot leave a link
// behind.
func TestDocsLinks(t *testing.T) {
	root := mustAbs(t, "..")
	texts := map[string]string{}
	read := func(rel string) (string, bool) {
		if s, ok := texts[rel]; ok {
			return s, true
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return "", false
		}
		texts[rel] = string(b)
		return string(b), true
	}
	files := docFiles(t)
	links := 0
	for _, f := range files {
		text, _ := read(f)
		for n, l := range proseLines(text) {
			for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(l, "``"), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				file, anchor, _ := strings.Cut(target, "#")
				where := fmt.Sprintf("%s (prose line %d): %s", f, n+1, target)
				rel := f
				if file != "" {
					rel = path.Clean(path.Join(path.Dir(f), file))
					if strings.HasPrefix(rel, "../") {
						t.Errorf("%s leaves the repository", where)
						continue
					}
					if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
						t.Errorf("%s: no such file", where)
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(rel, ".md") {
					continue
				}
				targetText, _ := read(rel)
				if !anchorsOf(targetText)[anchor] {
					t.Errorf("%s: %s has no heading with the anchor #%s", where, rel, anchor)
				}
			}
		}
	}
	if links == 0 {
		t.Fatalf("no relative links found in %v: the link pattern no longer matches", files)
	}
}

// TestDocsGithubAnchor pins the anchor rule TestDocsLinks relies on.
func TestDocsGithubAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Over HTTP, without the shim":                 "over-http-without-the-shim",
		"Tool results and errors (the tool contract)": "tool-results-and-errors-the-tool-contract",
		"Moving from server-memory":                   "moving-from-server-memory",
		"`hearthd adopt` and [its plan](x.md)":        "hearthd-adopt-and-its-plan",
		"Set up per system":                           "set-up-per-system",
		"snake_case stays":                            "snake_case-stays",
	} {
		if got := githubAnchor(heading); got != want {
			t.Errorf("githubAnchor(%q) = %q, want %q", heading, got, want)
		}
	}
	if a := anchorsOf("# A\n\n## Names\n\n```\n# not a heading\n```\n\n## Names\n"); !a["names"] || !a["names-1"] || a["not-a-heading"] {
		t.Errorf("anchorsOf: %v", a)
	}
}

// Every decision file has its row in the decisions index and in
// docs/architecture.md's table, the two places a reader looks for it.
func TestDecisionsIndexed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "docs", "decisions", "[0-9][0-9][0-9][0-9]-*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no decision files: %v", err)
	}
	index, err := os.ReadFile(filepath.Join("..", "docs", "decisions", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	arch, err := os.ReadFile(filepath.Join("..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		if !strings.Contains(string(index), "("+name+")") {
			t.Errorf("docs/decisions/README.md has no row linking %s", name)
		}
		if !strings.Contains(string(arch), "(decisions/"+name+")") {
			t.Errorf("docs/architecture.md links no %s", name)
		}
	}
}

// TestREADMEIsAFrontPage: the README says what hearth is, how to install it
// and how to connect the first client, and links to the rest: the first
// client's recipe is within its first 80 lines, the whole at most 300, and
// its two set-up commands stay (hearthd serve on the embedded defaults, and
// the tests).
func TestREADMEIsAFrontPage(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) > 300 {
		t.Errorf("README.md has %d lines, more than 300: move the detail to the docs page it belongs in", len(lines))
	}
	first := -1
	for i, l := range lines {
		if l == "claude mcp add -s user hearth -- hearth" {
			first = i + 1
			break
		}
	}
	if first < 0 || first > 80 {
		t.Errorf("the first client recipe (claude mcp add -s user hearth -- hearth) is at line %d of README.md, not within its first 80", first)
	}
	for _, want := range []string{"\nhearthd serve\n", "`go test ./...`"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("README.md lost its set-up command %q", strings.TrimSpace(want))
		}
	}
}

// readerless are wordings that speak of what a reader of the repository does
// not have: the machine the docs were written on ("this machine", a figure
// "measured here"), the project's tracker and its first notes.
var readerless = regexp.MustCompile(`(?i)\bthis machine\b|\b(measured|ran|run|untestable|observed|took|ms|minutes)\s+here\b|here \(not|(?-i:\bDESIGN\.md\b)|\bissue\s+#?\d+|\bthe issue\b|\bthe lead\b`)

// TestDocsSpeakToTheReader: no README or docs page says "here" for the
// machine it was written on, or points to an issue, the first design notes
// or the project's lead: the repository stands alone.
func TestDocsSpeakToTheReader(t *testing.T) {
	for _, f := range docFiles(t) {
		raw, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for n, l := range strings.Split(string(raw), "\n") {
			if m := readerless.FindString(l); m != "" {
				t.Errorf("%s:%d says %q, which a reader does not have: say which machine, or what it refers to, in words that stand alone", f, n+1, m)
			}
		}
	}
	for _, bad := range []string{"took 11 minutes here", "on this machine", "Wine 8.0 here (not Windows)", "see DESIGN.md", "issue 45", "the issue asked"} {
		if !readerless.MatchString(bad) {
			t.Errorf("readerless misses %q", bad)
		}
	}
	for _, good := range []string{"fails here, and", "the machine's load", "where it departs", "an object opened here is never closed"} {
		if readerless.MatchString(good) {
			t.Errorf("readerless matches %q", good)
		}
	}
}
