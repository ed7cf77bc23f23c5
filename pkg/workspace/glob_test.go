package workspace

import "testing"

func TestCompileGlob(t *testing.T) {
	cases := []struct {
		glob  string
		match []string
		miss  []string
	}{
		{"*.go", []string{"main.go", "a/b/c.go", ".go"}, []string{"main.go.orig", "a/go", "main.Go"}},
		{"main.go", []string{"main.go", "cmd/x/main.go"}, []string{"xmain.go", "main.go/x"}},
		{"pkg/*.go", []string{"pkg/a.go"}, []string{"pkg/a/b.go", "x/pkg/a.go"}},
		{"/pkg/*.go", []string{"pkg/a.go"}, []string{"x/pkg/a.go"}},
		{"pkg/**/*.go", []string{"pkg/a.go", "pkg/a/b.go", "pkg/a/b/c.go"}, []string{"pkga.go", "x/pkg/a.go"}},
		{"**/testdata/**", []string{"testdata/x", "a/testdata/b/c"}, []string{"a/testdatax/b"}},
		{"src/**", []string{"src/a", "src/a/b"}, []string{"src", "srcx/a"}},
		{"a?c.txt", []string{"abc.txt", "d/a.c.txt"}, []string{"ac.txt", "abbc.txt"}},
		{"[ab]*.md", []string{"a.md", "bx.md"}, []string{"c.md"}},
		{"[!ab]*.md", []string{"c.md"}, []string{"a.md", "b.md"}},
		{"[^ab]*.md", []string{"c.md"}, []string{"a.md"}},
		{"[a-c]x", []string{"bx"}, []string{"dx"}},
		{"[]]x", []string{"]x"}, []string{"ax"}},
		{"*.{go,md}", []string{"a.go", "b/c.md"}, []string{"a.txt", "a.{go,md}"}},
		{"{cmd,pkg}/**/*_test.go", []string{"cmd/a_test.go", "pkg/x/y_test.go"}, []string{"internal/a_test.go"}},
		{`\*.go`, []string{"*.go"}, []string{"a.go"}},
		{"a+b(c).txt", []string{"a+b(c).txt"}, []string{"aab(c).txt"}},
		{"café/*.txt", []string{"café/x.txt"}, []string{"cafe/x.txt"}},
	}
	for _, c := range cases {
		m, err := compileGlob(c.glob)
		if err != nil {
			t.Errorf("compileGlob(%q): %v", c.glob, err)
			continue
		}
		for _, p := range c.match {
			if !m(p) {
				t.Errorf("%q should match %q", c.glob, p)
			}
		}
		for _, p := range c.miss {
			if m(p) {
				t.Errorf("%q should not match %q", c.glob, p)
			}
		}
	}
}

func TestCompileGlobRejects(t *testing.T) {
	for _, g := range []string{"", "[abc", "{a,b", "a}", `a\`, "{a,{b,c}}", "[]", "[!]", "a\x00b"} {
		if _, err := compileGlob(g); err == nil {
			t.Errorf("compileGlob(%q) succeeded, want an error", g)
		}
	}
}

func FuzzCompileGlob(f *testing.F) {
	for _, s := range []string{"*.go", "**/x/**", "[a-z]?{b,c}", `\[`, "[!]]"} {
		f.Add(s, "a/b/c.go")
	}
	f.Fuzz(func(t *testing.T, glob, path string) {
		m, err := compileGlob(glob)
		if err == nil {
			m(path) // must not panic
		}
	})
}
