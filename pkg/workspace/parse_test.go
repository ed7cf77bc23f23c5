package workspace

import (
	"reflect"
	"testing"
)

func TestParseStatus(t *testing.T) {
	str := func(s string) *string { return &s }
	cases := []struct {
		lines []string
		want  gitStatus
	}{
		{[]string{"## main...origin/main [ahead 2, behind 1]", " M a.go", "?? b.go"}, gitStatus{Branch: str("main"), Upstream: "origin/main", Ahead: 2, Behind: 1, DirtyFiles: 2}},
		{[]string{"## main"}, gitStatus{Branch: str("main")}},
		{[]string{"## feature/x...origin/feature/x [behind 3]"}, gitStatus{Branch: str("feature/x"), Upstream: "origin/feature/x", Behind: 3}},
		{[]string{"## HEAD (no branch)", "A  c.go"}, gitStatus{Detached: true, DirtyFiles: 1}},
		{[]string{"## No commits yet on trunk", "?? x"}, gitStatus{Branch: str("trunk"), DirtyFiles: 1}},
		{[]string{"## Initial commit on master"}, gitStatus{Branch: str("master")}},
		{[]string{"## main...origin/main [gone]"}, gitStatus{Branch: str("main"), Upstream: "origin/main"}},
		{nil, gitStatus{}},
	}
	for _, c := range cases {
		if got := parseStatus(c.lines); !reflect.DeepEqual(*got, c.want) {
			t.Errorf("%q: got %+v, want %+v", c.lines, *got, c.want)
		}
	}
}

func TestUnquoteGitPath(t *testing.T) {
	for in, want := range map[string]string{
		"plain.go": "plain.go", `"tab\there.txt"`: "tab\there.txt", `"quote\"d"`: `quote"d`,
		`"new\nline"`: "new\nline", `"caf\303\251"`: "café", "spaces in name.md": "spaces in name.md",
	} {
		if got, ok := unquoteGitPath(in); !ok || got != want {
			t.Errorf("unquoteGitPath(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", `"unterminated`, `"bad \q escape"`} {
		if _, ok := unquoteGitPath(bad); ok {
			t.Errorf("unquoteGitPath(%q) accepted", bad)
		}
	}
}
