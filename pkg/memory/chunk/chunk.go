// Package chunk cuts a memory's text into overlapping pieces for ranking.
//
// BM25 and embeddings both judge short passages better than long documents: a
// 100 000-character memory that mentions a phrase once would otherwise lose to
// every short note. Pieces are at most Size runes, consecutive pieces share
// about Overlap runes so a phrase that straddles a cut is still found whole,
// and cuts fall on whitespace when there is any within the last Slack runes.
package chunk

import "unicode"

const (
	// Size is the largest piece, in runes (about 200 English words, well under
	// the 512-token window of small embedding models).
	Size = 1000
	// Overlap is how many runes a piece repeats from the end of the previous one.
	Overlap = 150
	// Slack is how far back from a hard cut we look for whitespace.
	Slack = 200
)

// Split returns the pieces of text. A text of at most Size runes is one piece;
// an empty text is one empty piece, so every memory has at least one chunk.
func Split(text string) []string {
	rs := []rune(text)
	if len(rs) <= Size {
		return []string{text}
	}
	var out []string
	start := 0
	for {
		end := start + Size
		if end >= len(rs) {
			out = append(out, string(rs[start:]))
			return out
		}
		for i := end; i > end-Slack; i-- {
			if unicode.IsSpace(rs[i]) {
				end = i
				break
			}
		}
		out = append(out, string(rs[start:end]))
		next := end - Overlap
		// Start the next piece at a word boundary too, so it begins with a whole word.
		for i := next; i < end; i++ {
			if unicode.IsSpace(rs[i]) {
				next = i + 1
				break
			}
		}
		start = next
	}
}
