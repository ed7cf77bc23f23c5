package clarify

import (
	"reflect"
	"strings"
	"testing"
)

func TestADRRoundTrip(t *testing.T) {
	snap := Snapshot{"Authentication": {"Strategy": "OAuth", "Library": "next-auth"}, "Database": {"Type": "PostgreSQL"}}
	doc := adrDoc{uid: "20250108T143512.237Z-A001", title: "Add auth\nwith newline", date: "2025-01-08T14:35:12Z",
		intention: "Add authentication", changed: []string{"Authentication"},
		decisions: Snapshot{"Authentication": snap["Authentication"]}, snapshot: snap,
		clarifications: [][2]string{{"Which authentication strategy?", "OAuth"}}}
	b := renderADR(doc)
	got, err := parseADR("x.md", doc.uid, b)
	if err != nil || !reflect.DeepEqual(got, snap) {
		t.Fatalf("round trip: %v %v\n%s", got, err, b)
	}
	if !strings.HasPrefix(string(b), "# ADR 20250108T143512.237Z-A001: Add auth with newline\n") {
		t.Fatalf("title not kept on one line:\n%s", b)
	}
}

// TestParseADRRefusesMalformed is the table of bad ADRs.
func TestParseADRRefusesMalformed(t *testing.T) {
	const uid = "20250108T143512.237Z-A001"
	head := "# ADR " + uid + ": x\n\n- UID: " + uid + "\n- Snapshot categories: A\n\n"
	cases := map[string]struct {
		text, code string
	}{
		"no PART 1":          {head + "## Context\n\nx\n", codeParseError},
		"wrong UID":          {strings.Replace(head, "- UID: "+uid, "- UID: 20250108T143512.237Z-A002", 1) + part1Heading + "\n\n### A\n\n- K: V\n", codeParseError},
		"no UID":             {"# ADR\n\n" + part1Heading + "\n\n### A\n\n- K: V\n", codeParseError},
		"entry before cat":   {head + part1Heading + "\n\n- K: V\n", codeParseError},
		"not key value":      {head + part1Heading + "\n\n### A\n\n- just text\n", codeParseError},
		"stray prose":        {head + part1Heading + "\n\n### A\n\nsome prose\n", codeParseError},
		"empty heading":      {head + part1Heading + "\n\n### \n", codeParseError},
		"missing category":   {head + part1Heading + "\n\n### B\n\n- K: V\n", codeValidationFailed},
		"category no values": {head + part1Heading + "\n\n### A\n\n## PART 2\n", codeValidationFailed},
	}
	for name, c := range cases {
		_, err := parseADR("docs/adr/x.md", uid, []byte(c.text))
		se, ok := err.(*envelopeError)
		if !ok || se.code != c.code {
			t.Errorf("%s: got %v, want %s", name, err, c.code)
		}
	}
}

func FuzzParseADR(f *testing.F) {
	const uid = "20250108T143512.237Z-A001"
	f.Add(string(renderADR(adrDoc{uid: uid, title: "t", snapshot: Snapshot{"A": {"K": "V"}}})))
	f.Add("- UID: " + uid + "\n" + part1Heading + "\n### A\n- K: V: W\n")
	f.Fuzz(func(t *testing.T, text string) {
		snap, err := parseADR("x.md", uid, []byte(text))
		if err != nil {
			if _, ok := err.(*envelopeError); !ok {
				t.Fatalf("not an envelope error: %v", err)
			}
			return
		}
		// What parses renders to a snapshot that parses the same.
		again, err := parseSnapshot("y.md", []byte(renderSnapshot(snap)))
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		for c, kv := range snap {
			for k, v := range kv {
				if strings.TrimSpace(oneLine(k)) == k && oneLine(v) == v && again[c][k] != v && c == strings.TrimSpace(c) {
					t.Fatalf("%q/%q: %q became %q", c, k, v, again[c][k])
				}
			}
		}
	})
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{"Authentication": "authentication", "Add OAuth 2.0 login!": "add-oauth-2-0-login",
		"../../etc/passwd": "etc-passwd", "": "decision", "日本語": "decision", strings.Repeat("ab ", 40): strings.TrimSuffix(strings.Repeat("ab-", 16), "-")} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}
