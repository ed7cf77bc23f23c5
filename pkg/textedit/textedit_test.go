package textedit

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestApplyAndUnified(t *testing.T) {
	src := "{\n  \"a\": {\n    \"command\": \"npx\",\n    \"args\": [\n      \"-y\",\n      \"x\"\n    ]\n  }\n}\n"
	cmd := strings.Index(src, `"npx"`)
	first := strings.Index(src, `"-y"`)
	edits := []Edit{
		{first, first, "\"run\",\n      \"--\",\n      \"npx\",\n      "},
		{cmd, cmd + 5, `"hearth"`},
	}
	got, err := Apply([]byte(src), edits)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": {\n    \"command\": \"hearth\",\n    \"args\": [\n      \"run\",\n      \"--\",\n      \"npx\",\n      \"-y\",\n      \"x\"\n    ]\n  }\n}\n"
	if string(got) != want {
		t.Fatalf("Apply:\n%s", got)
	}
	diff, err := Unified("a/f", "b/f", []byte(src), edits, 1)
	if err != nil {
		t.Fatal(err)
	}
	wantDiff := `--- a/f
+++ b/f
@@ -2,4 +2,7 @@
   "a": {
-    "command": "npx",
+    "command": "hearth",
     "args": [
+      "run",
+      "--",
+      "npx",
       "-y",
`
	if diff != wantDiff {
		t.Fatalf("Unified:\n%s\nwant:\n%s", diff, wantDiff)
	}
}

func TestUnifiedEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		edits     []Edit
		want      string
	}{
		{"no change", "a\n", []Edit{{0, 1, "a"}}, ""},
		{"no edits", "a\n", nil, ""},
		{"no newline at end", "a", []Edit{{0, 1, "b"}}, "--- x\n+++ y\n@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"},
		{"into empty", "", []Edit{{0, 0, "a\n"}}, "--- x\n+++ y\n@@ -0,0 +1,1 @@\n+a\n"},
		{"delete a line", "a\nb\nc\n", []Edit{{2, 4, ""}}, "--- x\n+++ y\n@@ -1,3 +1,2 @@\n a\n-b\n c\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Unified("x", "y", []byte(tc.src), tc.edits, 3)
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestBadEdits(t *testing.T) {
	for _, edits := range [][]Edit{
		{{-1, 0, ""}},
		{{2, 1, ""}},
		{{0, 4, ""}},
		{{0, 2, "x"}, {1, 3, "y"}},
	} {
		if _, err := Apply([]byte("abc"), edits); err == nil {
			t.Errorf("Apply(%v): want an error", edits)
		}
		if _, err := Unified("a", "b", []byte("abc"), edits, 3); err == nil {
			t.Errorf("Unified(%v): want an error", edits)
		}
	}
}

// TestUnifiedAppliesBack: for random texts and edits, applying the diff's
// hunks to the old text gives exactly the edited text.
func TestUnifiedAppliesBack(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 500; n++ {
		var src strings.Builder
		for i := r.IntN(40); i > 0; i-- {
			src.WriteString(strconv.Itoa(r.IntN(5)))
			if r.IntN(4) > 0 {
				src.WriteByte('\n')
			}
		}
		s := src.String()
		var edits []Edit
		at := 0
		for at < len(s) && r.IntN(3) > 0 {
			start := at + r.IntN(len(s)-at+1)
			end := start + r.IntN(min(4, len(s)-start)+1)
			edits = append(edits, Edit{start, end, []string{"", "x", "\n", "y\nz\n", "0\n"}[r.IntN(5)]})
			at = end
		}
		want, err := Apply([]byte(s), edits)
		if err != nil {
			t.Fatal(err)
		}
		ctx := r.IntN(4)
		diff, err := Unified("a", "b", []byte(s), edits, ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := patch(t, s, diff); got != string(want) {
			t.Fatalf("case %d: src %q edits %v context %d\ndiff:\n%s\npatched %q\nwant    %q", n, s, edits, ctx, diff, got, want)
		}
	}
}

// patch applies a unified diff made by Unified to old.
func patch(t *testing.T, old, diff string) string {
	if diff == "" {
		return old
	}
	oldLines := splitLines(old)
	lines := strings.SplitAfter(diff, "\n")
	var out []string
	next := 0 // next old line (0-based) not yet copied
	for i := 2; i < len(lines) && lines[i] != ""; {
		var os, oc, ns, nc int
		if _, err := fmt.Sscanf(lines[i], "@@ -%d,%d +%d,%d @@\n", &os, &oc, &ns, &nc); err != nil {
			t.Fatalf("hunk header %q: %v", lines[i], err)
		}
		start := os - 1
		if oc == 0 {
			start = os
		}
		out = append(out, oldLines[next:start]...)
		next = start
		i++
		for i < len(lines) && lines[i] != "" && lines[i][0] != '@' {
			l := lines[i][1:]
			kind := lines[i][0]
			i++
			if i < len(lines) && strings.HasPrefix(lines[i], `\ No newline`) {
				l = strings.TrimSuffix(l, "\n")
				i++
			}
			switch kind {
			case ' ':
				if oldLines[next] != l {
					t.Fatalf("context %q does not match %q", l, oldLines[next])
				}
				out = append(out, l)
				next++
			case '-':
				if oldLines[next] != l {
					t.Fatalf("removed %q does not match %q", l, oldLines[next])
				}
				next++
			case '+':
				out = append(out, l)
			}
		}
	}
	out = append(out, oldLines[next:]...)
	return strings.Join(out, "")
}

// TestUnifiedAllocatesInProportion: the diff of one edit in a large text
// allocates a few times the text, not the text once per line (finding line
// starts by converting the rest of the text to a string did: an 8 MB
// ~/.claude.json took two minutes and hundreds of gigabytes of garbage).
func TestUnifiedAllocatesInProportion(t *testing.T) {
	src := []byte(strings.Repeat("a line of a large config file, with some words in it\n", 20000)) // 1 MB
	edits := []Edit{{Start: len(src) / 2, End: len(src)/2 + 1, New: "b"}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d, err := Unified("a", "b", src, edits, 3)
	runtime.ReadMemStats(&after)
	if err != nil || d == "" {
		t.Fatal(err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 10*uint64(len(src)) {
		t.Fatalf("Unified of a %d-byte text allocated %d bytes", len(src), got)
	}
}
