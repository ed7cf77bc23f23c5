package chunk

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplit(t *testing.T) {
	words := strings.Repeat("alpha beta gamma delta ", 1000) // 23 000 runes
	tests := []struct {
		name      string
		text      string
		minChunks int
		maxChunks int
	}{
		{"empty", "", 1, 1},
		{"short", "one short memory", 1, 1},
		{"exactly Size", strings.Repeat("é", Size), 1, 1},
		{"words", words, 23000 / Size, 23000/(Size-Slack-Overlap) + 1},
		{"no spaces", strings.Repeat("x", 5000), 5, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Split(tc.text)
			if len(got) < tc.minChunks || len(got) > tc.maxChunks {
				t.Fatalf("%d chunks, want %d..%d", len(got), tc.minChunks, tc.maxChunks)
			}
			for i, c := range got {
				if n := utf8.RuneCountInString(c); n > Size {
					t.Fatalf("chunk %d has %d runes, over %d", i, n, Size)
				}
				if !strings.Contains(tc.text, c) {
					t.Fatalf("chunk %d is not a piece of the text", i)
				}
			}
			// Consecutive chunks overlap, so nothing between them is lost.
			for i := 1; i < len(got); i++ {
				prev, cur := got[i-1], got[i]
				if !strings.Contains(prev, cur[:min(20, len(cur))]) {
					t.Fatalf("chunk %d does not start inside chunk %d", i, i-1)
				}
			}
			if len(got) > 1 && !strings.HasSuffix(tc.text, got[len(got)-1]) {
				t.Fatal("the last chunk does not end the text")
			}
		})
	}
}
