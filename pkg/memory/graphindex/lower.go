package graphindex

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Lower lowercases s as JavaScript's String.prototype.toLowerCase does, so
// that a substring match here finds what the official memory server's
// `includes` on lowercased strings finds. It differs from strings.ToLower in
// the two mappings Unicode's SpecialCasing adds for lowercasing: U+0130 (İ)
// becomes "i̇" (i and a combining dot above), and a capital sigma that ends
// a word becomes ς (final sigma).
func Lower(s string) string {
	if isLowerASCII(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		switch {
		case r == 'İ':
			b.WriteString("i\u0307")
		case r == 'Σ':
			if finalSigma(s, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		case r < utf8.RuneSelf:
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteByte(byte(r))
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

func isLowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// finalSigma is Unicode's Final_Sigma condition for the Σ at byte i: a cased
// letter before it and none after it, skipping case-ignorable characters.
func finalSigma(s string, i int) bool {
	before := false
	for j := i; j > 0; {
		r, n := utf8.DecodeLastRuneInString(s[:j])
		j -= n
		if caseIgnorable(r) {
			continue
		}
		before = cased(r)
		break
	}
	if !before {
		return false
	}
	for j := i + len("Σ"); j < len(s); {
		r, n := utf8.DecodeRuneInString(s[j:])
		j += n
		if caseIgnorable(r) {
			continue
		}
		return !cased(r)
	}
	return true
}

func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r)
}

func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '·', '\u2019', '\u00AD':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
