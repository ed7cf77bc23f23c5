// Package textedit changes a text at byte spans and shows the change as a
// unified diff. The diff is computed from the edits themselves, line by
// line only around each edit, so a large file with a few small changes
// (a client config of several megabytes) costs no whole-file comparison.
package textedit

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Edit replaces the bytes [Start, End) of a text with New (an insertion
// when Start == End).
type Edit struct {
	Start, End int
	New        string
}

// Apply returns src with edits applied. Edits may come in any order but
// must lie inside src and must not overlap (two insertions at one offset
// are applied in the order given).
func Apply(src []byte, edits []Edit) ([]byte, error) {
	sorted, err := check(src, edits)
	if err != nil {
		return nil, err
	}
	var out []byte
	at := 0
	for _, e := range sorted {
		out = append(out, src[at:e.Start]...)
		out = append(out, e.New...)
		at = e.End
	}
	return append(out, src[at:]...), nil
}

func check(src []byte, edits []Edit) ([]Edit, error) {
	sorted := slices.Clone(edits)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Start < sorted[j].Start })
	prev := 0
	for _, e := range sorted {
		if e.Start < 0 || e.End < e.Start || e.End > len(src) {
			return nil, fmt.Errorf("edit [%d,%d) outside the text of %d bytes", e.Start, e.End, len(src))
		}
		if e.Start < prev {
			return nil, fmt.Errorf("edit [%d,%d) overlaps the one before it", e.Start, e.End)
		}
		prev = e.End
	}
	return sorted, nil
}

// Unified returns the unified diff (context lines around each change)
// between src and src with edits applied, under the names a and b; "" when
// the edits change nothing.
func Unified(a, b string, src []byte, edits []Edit, context int) (string, error) {
	sorted, err := check(src, edits)
	if err != nil {
		return "", err
	}
	starts := lineStarts(src)
	// An edit at the very end of a text that is empty or ends with a
	// newline falls on a line after the last one, empty and not shown.
	lineOf := func(off int) int {
		if off == len(src) && (len(src) == 0 || src[len(src)-1] == '\n') {
			return len(starts)
		}
		return sort.SearchInts(starts, off+1) - 1
	}
	lineStart := func(line int) int {
		if line == len(starts) {
			return len(src)
		}
		return starts[line]
	}

	// Regions: whole old lines touched by one or more edits.
	type region struct{ first, last int }
	var regions []region
	var regionEdits [][]Edit
	for _, e := range sorted {
		first, last := lineOf(e.Start), lineOf(e.Start)
		if e.End > e.Start {
			last = lineOf(e.End - 1)
		}
		if n := len(regions); n > 0 && first <= regions[n-1].last+1 { // touching regions merge, so their lines diff together
			regions[n-1].last = max(regions[n-1].last, last)
			regionEdits[n-1] = append(regionEdits[n-1], e)
			continue
		}
		regions = append(regions, region{first, last})
		regionEdits = append(regionEdits, []Edit{e})
	}

	// The whole file as line operations: unchanged lines between regions,
	// and inside each region the line diff of its old and new text.
	var ops []op
	oldLine := 0
	for i, r := range regions {
		for ; oldLine < r.first; oldLine++ {
			ops = append(ops, op{' ', lineText(src, starts, oldLine)})
		}
		from, to := lineStart(r.first), lineEnd(src, starts, r.last)
		var newText strings.Builder
		at := from
		for _, e := range regionEdits[i] {
			newText.Write(src[at:e.Start])
			newText.WriteString(e.New)
			at = e.End
		}
		newText.Write(src[at:to])
		ops = append(ops, diffLines(splitLines(string(src[from:to])), splitLines(newText.String()))...)
		oldLine = r.last + 1
	}
	for ; oldLine < len(starts); oldLine++ {
		ops = append(ops, op{' ', lineText(src, starts, oldLine)})
	}
	return format(a, b, ops, context), nil
}

type op struct {
	kind byte // ' ', '-' or '+'
	text string
}

// lineStarts are the offsets where src's lines begin (a final line without
// a newline counts; an empty text has none).
func lineStarts(src []byte) []int {
	var starts []int
	for i := 0; i < len(src); {
		starts = append(starts, i)
		j := bytes.IndexByte(src[i:], '\n') // not via string(src[i:]): that copies the rest of the text per line
		if j < 0 {
			break
		}
		i += j + 1
	}
	return starts
}

func lineEnd(src []byte, starts []int, line int) int {
	if line+1 < len(starts) {
		return starts[line+1]
	}
	return len(src)
}

func lineText(src []byte, starts []int, line int) string {
	return string(src[starts[line]:lineEnd(src, starts, line)])
}

// splitLines splits s into lines that keep their newline.
func splitLines(s string) []string {
	var lines []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return append(lines, s)
		}
		lines, s = append(lines, s[:i+1]), s[i+1:]
	}
	return lines
}

// maxCells bounds the table of one region's line diff; past it the region
// is shown as all removed, then all added, which is still a correct diff.
const maxCells = 1 << 22

// diffLines is the longest-common-subsequence line diff of two short texts.
func diffLines(a, b []string) []op {
	if len(a)*len(b) > maxCells {
		return replaceAll(a, b)
	}
	// lcs[i][j]: the longest common subsequence of a[i:] and b[j:].
	w := len(b) + 1
	lcs := make([]int, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	var ops []op
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			ops = append(ops, op{' ', a[i]})
			i, j = i+1, j+1
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			ops = append(ops, op{'-', a[i]})
			i++
		default:
			ops = append(ops, op{'+', b[j]})
			j++
		}
	}
	return append(ops, replaceAll(a[i:], b[j:])...)
}

func replaceAll(a, b []string) []op {
	ops := make([]op, 0, len(a)+len(b))
	for _, l := range a {
		ops = append(ops, op{'-', l})
	}
	for _, l := range b {
		ops = append(ops, op{'+', l})
	}
	return ops
}

// format writes ops as a unified diff: hunks of changes with up to context
// unchanged lines around them, two hunks merging when their contexts meet.
func format(a, b string, ops []op, context int) string {
	var changed []int
	for i, o := range ops {
		if o.kind != ' ' {
			changed = append(changed, i)
		}
	}
	if len(changed) == 0 {
		return ""
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", a, b)
	// Line numbers (1-based) of the old and new text before each op.
	oldNo, newNo := make([]int, len(ops)+1), make([]int, len(ops)+1)
	oldNo[0], newNo[0] = 1, 1
	for i, o := range ops {
		oldNo[i+1], newNo[i+1] = oldNo[i], newNo[i]
		if o.kind != '+' {
			oldNo[i+1]++
		}
		if o.kind != '-' {
			newNo[i+1]++
		}
	}
	for k := 0; k < len(changed); {
		from := max(0, changed[k]-context)
		end := k
		for end+1 < len(changed) && changed[end+1]-changed[end] <= 2*context {
			end++
		}
		to := min(len(ops), changed[end]+context+1)
		oldCount, newCount := oldNo[to]-oldNo[from], newNo[to]-newNo[from]
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(oldNo[from], oldCount), hunkRange(newNo[from], newCount))
		for _, o := range ops[from:to] {
			out.WriteByte(o.kind)
			out.WriteString(o.text)
			if !strings.HasSuffix(o.text, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		k = end + 1
	}
	return out.String()
}

// hunkRange is a hunk header's "start,count"; an empty range starts at the
// line before it, as diff and patch expect.
func hunkRange(start, count int) string {
	if count == 0 {
		start--
	}
	return fmt.Sprintf("%d,%d", start, count)
}
