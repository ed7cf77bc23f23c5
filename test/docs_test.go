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

// decisionFiles are the decision files, docs/decisions/NNNN-*.md, and the
// text of their index, docs/decisions/README.md.
func decisionFiles(t *testing.T) ([]string, string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "docs", "decisions", "[0-9][0-9][0-9][0-9]-*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no decision files: %v", err)
	}
	index, err := os.ReadFile(filepath.Join("..", "docs", "decisions", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return files, string(index)
}

// Every decision file has its row in the decisions index and in
// docs/architecture.md's table, the two places a reader looks for it.
func TestDecisionsIndexed(t *testing.T) {
	files, index := decisionFiles(t)
	arch, err := os.ReadFile(filepath.Join("..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		if !strings.Contains(index, "("+name+")") {
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
var readerless = regexp.MustCompile(`(?i)\bthis ([0-9a-z-]+ )?machine\b|\b(measured|ran|run|untestable|observed|took|ms|minutes)\s+here\b|here \(not|(?-i:\bDESIGN\.md\b)|\bissue\s+#?\d+|\bthe issue\b|\bthe lead\b`)

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
	for _, bad := range []string{"took 11 minutes here", "on this machine", "this 2-core machine", "Wine 8.0 here (not Windows)", "see DESIGN.md", "issue 45", "the issue asked"} {
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

var (
	// decisionStatus is a decision's Status line, its links written as
	// their numbers: accepted (or superseded) on a date, then the dates it
	// was revised in place, then the decisions that revised or extended it.
	decisionStatus = regexp.MustCompile(`^(accepted \d{4}-\d\d-\d\d( \([^)]*\))?|superseded \d{4}-\d\d-\d\d by \d{4})` +
		`(; revised \d{4}-\d\d-\d\d(, \d{4}-\d\d-\d\d)*)?` +
		`(; (revised|extended) by \d{4}((, | and )\d{4})*)*$`)
	// decisionLink is a link to another decision, by number.
	decisionLink = regexp.MustCompile(`\[(?:decision )?(\d{4})\]\(\d{4}-[^)]*\)`)
	// revisionNote is an in-place revision log: how a decision changed
	// belongs in its History, not in its text.
	revisionNote = regexp.MustCompile(`(?i)\brevised (on )?\d{4}-\d\d-\d\d|\(revised\b|^#+ revis|\brevision \(\d{4}|since (its|the) revision`)
	// decisionRelation is what a decision says it does to earlier ones.
	decisionRelation = regexp.MustCompile(`\*\*(Revises|Supersedes|Changes|Amends|Departs from):\*\*((?:[^*\n]|\n[^\n*])*)`)
)

// decisionStatusText is the Status line of a decision file's text with its
// links replaced by their numbers, as the index shows it.
func decisionStatusText(text string) (string, bool) {
	lines := strings.SplitN(text, "\n", 5)
	if len(lines) < 4 || !strings.HasPrefix(lines[2], "**Status:** ") || strings.TrimSpace(lines[3]) != "" {
		return "", false
	}
	st := strings.TrimSuffix(strings.TrimPrefix(lines[2], "**Status:** "), ".")
	return decisionLink.ReplaceAllString(st, "$1"), true
}

// TestDecisionsStateTheirDecision: each decision's Status line is one short
// line (accepted and when; revised when, and by which decisions), its text
// states the decision as it stands, and how it changed is the dated list of
// its History, its last section; the index shows each Status line as it is,
// and a decision that revises another is named in that one's Status line.
func TestDecisionsStateTheirDecision(t *testing.T) {
	files, index := decisionFiles(t)
	statuses := map[string]string{}
	texts := map[string]string{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name, text := filepath.Base(f), string(raw)
		num := name[:4]
		texts[num] = text
		st, ok := decisionStatusText(text)
		if !ok {
			t.Errorf("%s: line 3 is not one Status line (\"**Status:** accepted YYYY-MM-DD.\") followed by a blank line", name)
			continue
		}
		statuses[num] = st
		if !decisionStatus.MatchString(st) || len(st) > 120 {
			t.Errorf("%s: Status %q: want \"accepted YYYY-MM-DD\", then \"; revised YYYY-MM-DD\" and \"; revised by NNNN\" (or superseded), at most 120 characters: what changed goes in its History", name, st)
		}
		body, history, hasHistory := strings.Cut(text, "\n## History\n")
		if strings.Contains(st, "revised") || strings.Contains(st, "extended") || strings.Contains(st, "superseded") {
			if !hasHistory {
				t.Errorf("%s: its Status says it changed, but it has no \"## History\" at its end", name)
			}
			for _, m := range regexp.MustCompile(`by (\d{4}(?:(?:, | and )\d{4})*)`).FindAllStringSubmatch(st, -1) {
				for _, n := range regexp.MustCompile(`\d{4}`).FindAllString(m[1], -1) {
					if !strings.Contains(history, n) {
						t.Errorf("%s: its Status names %s, which its History does not", name, n)
					}
				}
			}
		}
		if strings.Contains(history, "\n## ") {
			t.Errorf("%s: a section follows its History: the History is the last section", name)
		}
		for n, l := range strings.Split(body, "\n") {
			if n != 2 && revisionNote.MatchString(l) {
				t.Errorf("%s:%d: %q is a revision note: state the decision as it stands, and say how it changed in its History", name, n+1, revisionNote.FindString(l))
			}
		}
		row := regexp.MustCompile(`(?m)^\| \[` + num + `\]\(` + regexp.QuoteMeta(name) + `\) \| .* \| ([^|]*) \|$`).FindStringSubmatch(index)
		if row == nil || row[1] != st {
			got := "no row"
			if row != nil {
				got = row[1]
			}
			t.Errorf("docs/decisions/README.md's status of %s is %q, its Status line says %q", num, got, st)
		}
	}
	// A decision that revises, supersedes, changes or amends another is named
	// in that one's Status line.
	for num, text := range texts {
		for _, m := range decisionRelation.FindAllStringSubmatch(text, -1) {
			for _, earlier := range regexp.MustCompile(`\b\d{4}\b`).FindAllString(m[2], -1) {
				if st, ok := statuses[earlier]; ok && earlier < num && !strings.Contains(st, num) {
					t.Errorf("decision %s %s %s, but %s's Status (%q) does not name %s", num, strings.ToLower(m[1]), earlier, earlier, st, num)
				}
			}
		}
	}
}

// TestDecisionStatusGrammar pins the Status lines the test accepts.
func TestDecisionStatusGrammar(t *testing.T) {
	for _, good := range []string{"accepted 2026-11-22", "accepted 2026-11-22 (foundation)", "accepted 2026-11-27; revised 2026-11-27, 2026-12-02; revised by 0051, 0054 and 0056",
		"superseded 2026-12-02 by 0056", "accepted 2026-11-26; extended by 0051; revised by 0056"} {
		if !decisionStatus.MatchString(good) {
			t.Errorf("decisionStatus refuses %q", good)
		}
	}
	for _, bad := range []string{"accepted", "accepted; revised 2026-11-27 (an HTTP body is decoded once too)", "accepted 2026-11-27; revised 2026-12-02 by [decision 0056](0056-client-shape.md): roots are answered by a client"} {
		if decisionStatus.MatchString(bad) {
			t.Errorf("decisionStatus accepts %q", bad)
		}
	}
	if st, _ := decisionStatusText("# 0001: x\n\n**Status:** accepted 2026-11-22; revised by [0013](0013-concurrent-mcp-calls.md) and [decision 0030](0030-ids-keep-their-type.md).\n\nText.\n"); st != "accepted 2026-11-22; revised by 0013 and 0030" {
		t.Errorf("decisionStatusText = %q", st)
	}
	for _, note := range []string{"- Limits (revised 2026-11-27). A 2025 session", "## Revision (2026-11-27): measured again", "**Revised 2026-11-27:** Streamable HTTP", "(and, since the revision of 2026-11-27, the tracker"} {
		if !revisionNote.MatchString(note) {
			t.Errorf("revisionNote misses %q", note)
		}
	}
}
