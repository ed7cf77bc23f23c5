package index

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// matcher finds matching lines in a file's content fast. Go's regexp is
// slow at scanning (and slower still case-insensitively), so the content is
// scanned for a literal every match must contain, with memchr-speed
// byte searches, and only the lines holding it are handed to the regexp.
// A literal query with nothing Unicode-specific to fold needs no regexp at
// all.
//
// Case-insensitive literal scanning folds ASCII letters, like the trigram
// index: a line that spells a letter with a non-ASCII fold of it (the Kelvin
// sign for k, the long s for s) is not found by a query in ASCII.
type matcher struct {
	re    *regexp.Regexp
	exact bool   // the literal alone decides: no regexp on the line
	lit   []byte // the literal scanned for (folded to lower case when fold); nil: none
	fold  bool
	// Scanning state for one file (case-insensitive: the rarest byte of
	// the literal, in both cases).
	anchor int
	lo, up byteScan
}

func newMatcher(q Query) (*matcher, error) {
	re, err := Compile(q)
	if err != nil {
		return nil, err
	}
	m := &matcher{re: re}
	if !q.Regex && !strings.ContainsAny(q.Pattern, "\r\n") && (q.CaseSensitive || isASCII(q.Pattern)) {
		m.exact, m.fold = true, !q.CaseSensitive
		m.lit = []byte(q.Pattern)
	} else if parsed, err := syntax.Parse(re.String(), syntax.Perl); err == nil {
		m.lit, m.fold = bestLiteral(required(parsed.Simplify()))
	}
	if len(m.lit) == 0 {
		m.exact, m.lit, m.fold = false, nil, false
	}
	if m.fold {
		for i, b := range m.lit {
			m.lit[i] = fold[b]
		}
		m.anchor = rarest(m.lit)
	}
	return m, nil
}

// next returns where the next candidate at or after pos starts: an
// occurrence of the literal (the start of a match when exact), the start of
// a regexp match, or -1 when there is none. pos never decreases within one
// file; start resets the scanning state for a new file.
func (m *matcher) next(c []byte, pos int) int {
	switch {
	case m.lit == nil:
		loc := m.re.FindIndex(c[pos:])
		if loc == nil {
			return -1
		}
		return pos + loc[0]
	case !m.fold:
		i := bytes.Index(c[pos:], m.lit)
		if i < 0 {
			return -1
		}
		return pos + i
	}
	n := len(m.lit)
	for p := pos + m.anchor; p+n-m.anchor <= len(c); {
		a := min(m.lo.from(c, p), m.up.from(c, p))
		if a >= len(c) {
			return -1
		}
		s := a - m.anchor
		if s+n <= len(c) && equalFoldASCII(c[s:s+n], m.lit) {
			return s
		}
		p = a + 1
	}
	return -1
}

// start prepares the scanning state for a new file.
func (m *matcher) start() {
	if m.fold {
		b := m.lit[m.anchor]
		m.lo = byteScan{b: b, next: -1}
		m.up = byteScan{b: upper(b), next: -1}
	}
}

// byteScan remembers the next occurrence of one byte, so that scanning for
// either of two bytes costs one pass over the content for each.
type byteScan struct {
	b    byte
	next int // the occurrence at or after the last asked position; len(c): none
}

func (s *byteScan) from(c []byte, p int) int {
	if s.next < p {
		if i := bytes.IndexByte(c[p:], s.b); i < 0 {
			s.next = len(c)
		} else {
			s.next = p + i
		}
	}
	return s.next
}

func upper(b byte) byte {
	if 'a' <= b && b <= 'z' {
		return b - 'a' + 'A'
	}
	return b
}

func equalFoldASCII(a, lowered []byte) bool {
	for i, b := range a {
		if fold[b] != lowered[i] {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// commonBytes lists bytes by how often they occur in source code, most
// common first; any byte not listed counts as rarer than all of them.
const commonBytes = " e\tt\nrionasl/cd.upm(,)f\"_h=g*:b;{}xyvw0k1-<>[]#'2$\\+&"

// rarest returns the index of the literal's least common byte, the one
// scanned for.
func rarest(lit []byte) int {
	best, bestRank := 0, -1
	for i, b := range lit {
		if r := rank(b); r > bestRank {
			best, bestRank = i, r
		}
	}
	return best
}

// rank is how rare a byte is in code: higher is rarer. Letters rank by
// their lower case, as a case-insensitive scan looks for both.
func rank(b byte) int {
	r := strings.IndexByte(commonBytes, fold[b])
	if r < 0 {
		return len(commonBytes)
	}
	return r
}

// lit is a literal every match of a regexp contains.
type lit struct {
	runes []rune
	fold  bool
}

// required returns literals every match of re must contain (not all of
// them; any is a valid prefilter).
func required(re *syntax.Regexp) []lit {
	switch re.Op {
	case syntax.OpLiteral:
		return []lit{{re.Rune, re.Flags&syntax.FoldCase != 0}}
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var out []lit
		var run []rune
		runFold := false
		for _, s := range re.Sub {
			if s.Op == syntax.OpLiteral {
				f := s.Flags&syntax.FoldCase != 0
				if len(run) > 0 && f != runFold {
					out = append(out, lit{run, runFold})
					run = nil
				}
				run, runFold = append(run, s.Rune...), f
				continue
			}
			if len(run) > 0 {
				out = append(out, lit{run, runFold})
				run = nil
			}
			out = append(out, required(s)...)
		}
		if len(run) > 0 {
			out = append(out, lit{run, runFold})
		}
		return out
	}
	return nil
}

// bestLiteral picks the usable literal whose rarest byte is rarest (it is
// what the scan looks for), the longer on a tie. A case-folded literal is
// usable only in its ASCII runs (non-ASCII letters fold to other byte
// sequences).
func bestLiteral(lits []lit) (best []byte, fold bool) {
	score := func(b []byte) int {
		if len(b) == 0 {
			return -1
		}
		return rank(b[rarest(b)])*1000 + min(len(b), 999)
	}
	bestScore := -1
	consider := func(b []byte, f bool) {
		if s := score(b); s > bestScore {
			best, fold, bestScore = b, f, s
		}
	}
	for _, l := range lits {
		if !l.fold {
			consider([]byte(string(l.runes)), false)
			continue
		}
		var run []byte
		for _, r := range l.runes {
			if r >= utf8.RuneSelf {
				consider(run, true)
				run = nil
				continue
			}
			run = append(run, byte(r))
		}
		consider(run, true)
	}
	return best, fold
}
