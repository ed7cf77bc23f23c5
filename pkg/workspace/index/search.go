package index

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Query is one search.
type Query struct {
	Pattern       string
	Regex         bool              // Pattern is an RE2 regular expression; else a literal
	CaseSensitive bool              // else ASCII and Unicode case are folded
	Path          func(string) bool // if set, only files whose path it accepts
	Limit         int               // hits at most (≥ 1)
	Context       int               // lines of context before and after each hit
}

// Hit is one matching line. Line and Column are 1-based; Column counts
// characters (UTF-8 runes) from the start of the line to the match.
type Hit struct {
	Path   string   `json:"path"`
	Line   int      `json:"line"`
	Column int      `json:"column"`
	Text   string   `json:"text"`
	Before []string `json:"before"`
	After  []string `json:"after"`
}

// Stats says how a search went.
type Stats struct {
	Candidates int  // files the trigram index left to verify
	Scanned    int  // files verified before the limit was reached
	Truncated  bool // more hits exist beyond Limit
	Indexed    bool // the trigram index narrowed the files (false: every file was scanned)
}

// maxLineText bounds a hit's or context line's text; longer lines (minified
// code) are cut at a character boundary.
const maxLineText = 2000

// Compile checks a query's pattern and returns the matcher Search uses, so a
// bad regular expression is an argument error before any work.
func Compile(q Query) (*regexp.Regexp, error) {
	expr := q.Pattern
	if !q.Regex {
		expr = regexp.QuoteMeta(expr)
	}
	// ^ and $ mean a line's start and end, as in every code-search tool.
	flags := "(?m"
	if !q.CaseSensitive {
		flags += "i"
	}
	expr = flags + ")" + expr
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression: %v", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return re, nil
}

// Search finds lines matching q, in path order, one hit per line, at most
// q.Limit. A match never spans lines. Matches are always verified against
// the content: the index only narrows which files are read.
func (ix *Index) Search(ctx context.Context, q Query) ([]Hit, Stats, error) {
	m, err := newMatcher(q)
	if err != nil {
		return nil, Stats{}, err
	}
	if q.Limit <= 0 {
		q.Limit = 1
	}
	var st Stats
	cands, all := ix.candidates(m.re)
	st.Indexed = !all
	if all {
		st.Candidates = ix.n
	} else {
		st.Candidates = len(cands)
	}
	hits := make([]Hit, 0, min(q.Limit, 64))
	for k := 0; k < st.Candidates; k++ {
		i := k
		if !all {
			i = int(cands[k])
		}
		if k&255 == 0 && ctx.Err() != nil {
			return nil, st, ctx.Err()
		}
		f := ix.file(i)
		if q.Path != nil && !q.Path(f.Path) {
			continue
		}
		st.Scanned++
		if m.matchFile(f, q, &hits) {
			st.Truncated = true
			break
		}
	}
	return hits, st, nil
}

// matchFile appends f's matching lines to hits; it reports true when the
// limit was reached with a further match left.
func (m *matcher) matchFile(f FileInfo, q Query, hits *[]Hit) bool {
	c := f.content
	m.start()
	pos, line, counted := 0, 1, 0
	for pos < len(c) {
		at := m.next(c, pos)
		if at < 0 {
			return false
		}
		start := bytes.LastIndexByte(c[:at], '\n') + 1
		end := len(c)
		if e := bytes.IndexByte(c[at:], '\n'); e >= 0 {
			end = at + e
		}
		col := at
		if !m.exact {
			// The candidate came from a prefilter or from a match that may
			// run past the line: the line alone decides.
			loc := m.re.FindIndex(c[start:end])
			if loc == nil {
				pos = end + 1
				continue
			}
			col = start + loc[0]
		}
		if len(*hits) == q.Limit {
			return true
		}
		line += bytes.Count(c[counted:start], nl)
		counted = start
		*hits = append(*hits, Hit{
			Path:   f.Path,
			Line:   line,
			Column: utf8.RuneCount(c[start:col]) + 1,
			Text:   text(c[start:end]),
			Before: linesBefore(c, start, q.Context),
			After:  linesAfter(c, end, q.Context),
		})
		pos = end + 1 // one hit per line: go on at the next line
	}
	return false
}

var nl = []byte{'\n'}

func text(b []byte) string {
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if len(b) > maxLineText {
		cut := maxLineText
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		b = b[:cut]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// linesBefore returns up to n lines ending just before the line starting at start.
func linesBefore(c []byte, start, n int) []string {
	out := []string{}
	end := start - 1 // the newline ending the previous line
	for len(out) < n && end >= 0 {
		s := bytes.LastIndexByte(c[:end], '\n') + 1
		out = append(out, text(c[s:end]))
		end = s - 1
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// linesAfter returns up to n lines after the line ending at end.
func linesAfter(c []byte, end, n int) []string {
	out := []string{}
	s := end + 1
	for len(out) < n && s < len(c) {
		e := len(c)
		if k := bytes.IndexByte(c[s:], '\n'); k >= 0 {
			e = s + k
		}
		out = append(out, text(c[s:e]))
		s = e + 1
	}
	return out
}

// candidates returns the files that may match re, or all true when the
// pattern gives the index nothing to narrow by.
func (ix *Index) candidates(re *regexp.Regexp) ([]int32, bool) {
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil, true
	}
	q := plan(parsed.Simplify())
	return ix.eval(q)
}

// tq is a trigram query: the files that may match are those holding every
// trigram of every literal in and, intersected with every sub in subs (op
// and) or the union of subs (op or).
type tq struct {
	op   int
	lits []string // folded literals, each of length ≥ 3
	subs []*tq
}

const (
	opAll = iota // no constraint
	opAnd
	opOr
)

var all = &tq{op: opAll}

// plan derives a trigram query from a regular expression: literals that every
// match must contain. It may only over-approximate (a file it excludes cannot
// match), so anything it does not understand becomes opAll.
func plan(re *syntax.Regexp) *tq {
	switch re.Op {
	case syntax.OpLiteral:
		return literal(re.Rune, re.Flags&syntax.FoldCase != 0)
	case syntax.OpCapture:
		return plan(re.Sub[0])
	case syntax.OpPlus:
		return plan(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return plan(re.Sub[0])
		}
		return all
	case syntax.OpConcat:
		q := &tq{op: opAnd}
		// Adjacent literals with the same case rule form one longer literal.
		var run []rune
		runFold := false
		flush := func() {
			if len(run) > 0 {
				q = and(q, literal(run, runFold))
				run = nil
			}
		}
		for _, s := range re.Sub {
			if s.Op == syntax.OpLiteral {
				f := s.Flags&syntax.FoldCase != 0
				if len(run) > 0 && f != runFold {
					flush()
				}
				run, runFold = append(run, s.Rune...), f
				continue
			}
			flush()
			q = and(q, plan(s))
		}
		flush()
		return q
	case syntax.OpAlternate:
		q := &tq{op: opOr}
		for _, s := range re.Sub {
			sq := plan(s)
			if sq.op == opAll {
				return all
			}
			q.subs = append(q.subs, sq)
		}
		return q
	}
	return all
}

func and(a, b *tq) *tq {
	switch {
	case b.op == opAll:
		return a
	case b.op == opAnd && len(b.subs) == 0:
		a.lits = append(a.lits, b.lits...)
	default:
		a.subs = append(a.subs, b)
	}
	return a
}

// literal is the query for a literal string. Under case folding only runs of
// ASCII characters are usable: the index folds ASCII letters alone.
func literal(rs []rune, foldCase bool) *tq {
	q := &tq{op: opAnd}
	var b strings.Builder
	flush := func() {
		if b.Len() >= 3 {
			q.lits = append(q.lits, b.String())
		}
		b.Reset()
	}
	for _, r := range rs {
		if foldCase && r >= utf8.RuneSelf {
			flush()
			continue
		}
		if r < utf8.RuneSelf {
			b.WriteByte(fold[byte(r)])
		} else {
			b.WriteRune(r)
		}
	}
	flush()
	if len(q.lits) == 0 {
		return all
	}
	return q
}

// eval runs a trigram query against the index.
func (ix *Index) eval(q *tq) ([]int32, bool) {
	switch q.op {
	case opAll:
		return nil, true
	case opOr:
		var out []int32
		for _, s := range q.subs {
			r, isAll := ix.eval(s)
			if isAll {
				return nil, true
			}
			out = union(out, r)
		}
		return out, false
	}
	var out []int32
	first := true
	narrow := func(r []int32) {
		if first {
			out, first = r, false
		} else {
			out = intersect(out, r)
		}
	}
	for _, lit := range q.lits {
		for i := 0; i+3 <= len(lit); i++ {
			t := uint32(lit[i])<<16 | uint32(lit[i+1])<<8 | uint32(lit[i+2])
			narrow(ix.postings(t))
			if len(out) == 0 {
				return out, false
			}
		}
	}
	for _, s := range q.subs {
		r, isAll := ix.eval(s)
		if isAll {
			continue
		}
		narrow(r)
		if len(out) == 0 {
			return out, false
		}
	}
	if first {
		return nil, true
	}
	return out, false
}

func intersect(a, b []int32) []int32 {
	out := a[:0:0]
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

func union(a, b []int32) []int32 {
	out := make([]int32, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			out = append(out, a[i])
			i++
		case a[i] > b[j]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}
