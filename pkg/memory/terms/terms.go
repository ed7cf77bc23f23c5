// Package terms turns text into plain search terms and marks them in results.
// Terms are runs of letters, digits and marks, case- and accent-folded, so
// whatever the user typed ("quotes", *, NEAR, -, parentheses, AND/OR/NOT) is
// only ever words, never query syntax. The memory index cuts stored text with
// Tokens and queries with Split, so both sides fold alike by construction.
package terms

import (
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"
)

// MaxTerms bounds the terms taken from one query: a 1000-character query of
// one-letter words would otherwise make a 500-way OR.
const MaxTerms = 64

func isTermRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || unicode.Is(unicode.Co, r)
}

// Fold lowercases a term and strips its diacritics.
func Fold(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// Split returns the words of s, distinct after folding, in order of first
// appearance, at most MaxTerms of them. Words keep their case and accents (the
// snippet marks them as typed); the index folds them with Fold.
func Split(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !isTermRune(r) }) {
		f := Fold(w)
		if f == "" || seen[f] {
			continue
		}
		seen[f] = true
		out = append(out, w)
		if len(out) == MaxTerms {
			break
		}
	}
	return out
}

// Tokens calls fn with every term of text, folded, in order, repeats included.
// The folded string is only valid during the call (it may share a scratch
// buffer). Pure-ASCII words, most of any text, skip Unicode normalization.
func Tokens(text string, fn func(folded string)) {
	var scratch []byte
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf && !isASCIITerm(c) {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			if r, n := utf8.DecodeRuneInString(text[i:]); !isTermRune(r) {
				i += n
				continue
			}
		}
		// A word starts at i; find its end, noting whether it is all ASCII.
		j, ascii, upper := i, true, false
		for j < len(text) {
			c := text[j]
			if c < utf8.RuneSelf {
				if !isASCIITerm(c) {
					break
				}
				upper = upper || ('A' <= c && c <= 'Z')
				j++
				continue
			}
			r, n := utf8.DecodeRuneInString(text[j:])
			if !isTermRune(r) {
				break
			}
			ascii = false
			j += n
		}
		switch {
		case !ascii:
			if f := Fold(text[i:j]); f != "" {
				fn(f)
			}
		case upper:
			scratch = append(scratch[:0], text[i:j]...)
			for k, c := range scratch {
				if 'A' <= c && c <= 'Z' {
					scratch[k] = c + 'a' - 'A'
				}
			}
			fn(unsafeString(scratch))
		default:
			fn(text[i:j])
		}
		i = j
	}
}

func isASCIITerm(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// unsafeString views b as a string without copying; Tokens documents that the
// string dies with the call, and map lookups with it do not retain it.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Snippet cuts a window of about width runes out of text around the first
// occurrence of any term and wraps every occurrence inside it in ** **.
// Without a match it returns the start of text.
func Snippet(text string, ts []string, width int) string {
	want := make(map[string]bool, len(ts))
	for _, t := range ts {
		want[Fold(t)] = true
	}
	type span struct{ start, end int } // byte offsets
	var hits []span
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isTermRune(r) {
			i += n
			continue
		}
		j := i
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if !isTermRune(r) {
				break
			}
			j += n
		}
		if want[Fold(text[i:j])] {
			hits = append(hits, span{i, j})
		}
		i = j
	}

	// Window in bytes around the first hit, moved to rune boundaries.
	start := 0
	if len(hits) > 0 {
		start = backRunes(text, hits[0].start, width/4)
	}
	end := forwardRunes(text, start, width)
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	pos := start
	for _, h := range hits {
		if h.start < start || h.end > end {
			continue
		}
		b.WriteString(text[pos:h.start])
		b.WriteString("**")
		b.WriteString(text[h.start:h.end])
		b.WriteString("**")
		pos = h.end
	}
	b.WriteString(text[pos:end])
	if end < len(text) {
		b.WriteString("…")
	}
	return b.String()
}

func backRunes(s string, i, n int) int {
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return i
}

func forwardRunes(s string, i, n int) int {
	for ; n > 0 && i < len(s); n-- {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}
