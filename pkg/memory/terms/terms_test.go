package terms

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"hello world", []string{"hello", "world"}},
		{`"quoted" NEAR(a b) -x *`, []string{"quoted", "NEAR", "a", "b", "x"}},
		{"Café café CAFE", []string{"Café"}},
		{"***", nil},
		{"", nil},
		{"Привет мир", []string{"Привет", "мир"}},
		{"c++ AND c#", []string{"c", "AND"}},
	}
	for _, tc := range tests {
		if got := Split(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Split(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var many []string
	for i := 0; i < 100; i++ {
		many = append(many, fmt.Sprintf("t%d", i))
	}
	if got := Split(strings.Join(many, " ")); !slices.Equal(got, many[:MaxTerms]) {
		t.Errorf("Split of 100 words kept %d, want the first %d", len(got), MaxTerms)
	}
}

func TestSnippet(t *testing.T) {
	tests := []struct {
		text  string
		terms []string
		width int
		want  string
	}{
		{"the quick brown fox", []string{"quick"}, 100, "the **quick** brown fox"},
		{"Le Café ouvre", []string{"cafe"}, 100, "Le **Café** ouvre"},
		{"no match here", []string{"zebra"}, 5, "no ma…"},
		{strings.Repeat("x ", 50) + "target end", []string{"target"}, 20, "… x x **target** end"},
	}
	for _, tc := range tests {
		if got := Snippet(tc.text, tc.terms, tc.width); got != tc.want {
			t.Errorf("Snippet(%q, %q) = %q, want %q", tc.text, tc.terms, got, tc.want)
		}
	}
}

// tokensAgree checks that Tokens folds text exactly as Split+Fold do, since
// the index cuts stored text with one and queries with the other.
func tokensAgree(t *testing.T, text string) {
	t.Helper()
	var got []string
	Tokens(text, func(f string) { got = append(got, strings.Clone(f)) })
	var want []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !isTermRune(r) }) {
		if f := Fold(w); f != "" {
			want = append(want, f)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("Tokens(%q) = %q, want %q", text, got, want)
	}
}

func TestTokensAgreeWithSplitFold(t *testing.T) {
	for _, text := range []string{
		"Hello World hello", "Le Café de la GARE", "Привет, мир! Как дела?", "Ünïcödé ßtraße test",
		"東京 タワー に 行った", "emoji 🔥 fire line", "Ελληνικά ΓΡΆΜΜΑΤΑ", "c++ AND c# x86_64 v1.2.3",
		"mixedÀscii wörds", "", "***", "tab\tnew\nline", "\xff\xfe broken utf8 \xc3",
	} {
		tokensAgree(t, text)
	}
}

func FuzzTokens(f *testing.F) {
	f.Add("Hello Café мир 🔥 x86")
	f.Fuzz(tokensAgree)
}
