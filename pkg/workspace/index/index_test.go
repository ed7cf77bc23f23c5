package index

import (
	"bytes"
	"context"
	"errors"
	gobuild "go/build"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
)

// corpus lists the Go files of this repository (a real, varied code base).
func corpus(t testing.TB) (string, []Entry) {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	var es []Entry
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && (strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".md")) {
			rel, _ := filepath.Rel(root, p)
			es = append(es, Entry{Rel: filepath.ToSlash(rel)})
		}
		return nil
	})
	if len(es) < 50 {
		t.Fatalf("corpus too small: %d files", len(es))
	}
	return root, es
}

// openRoot opens dir as the root a build reads its entries in.
func openRoot(tb testing.TB, dir string) *os.Root {
	tb.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

func build(t testing.TB, dir string, entries []Entry, prev *Index) (*Index, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.idx")
	if _, err := Build(context.Background(), path, Meta{Repo: "r"}, openRoot(t, dir), entries, prev, nil); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix, path
}

// bruteForce is the reference: every file, every line, the regexp alone.
func bruteForce(t *testing.T, root string, entries []Entry, q Query) []Hit {
	re, err := Compile(q)
	if err != nil {
		t.Fatal(err)
	}
	var hits []Hit
	for _, e := range sortedEntries(entries) {
		b, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.Rel)))
		if q.Path != nil && !q.Path(e.Rel) {
			continue
		}
		lines := strings.Split(string(b), "\n")
		if strings.HasSuffix(string(b), "\n") {
			lines = lines[:len(lines)-1] // a final newline ends the last line
		}
		for i, l := range lines {
			loc := re.FindStringIndex(l)
			if loc == nil {
				continue
			}
			h := Hit{Path: e.Rel, Line: i + 1, Column: utf8.RuneCountInString(l[:loc[0]]) + 1, Text: text([]byte(l)), Before: []string{}, After: []string{}}
			for j := max(0, i-q.Context); j < i; j++ {
				h.Before = append(h.Before, text([]byte(lines[j])))
			}
			for j := i + 1; j < len(lines) && j <= i+q.Context; j++ {
				h.After = append(h.After, text([]byte(lines[j])))
			}
			hits = append(hits, h)
		}
	}
	if len(hits) > q.Limit {
		hits = hits[:q.Limit]
	}
	return hits
}

func sortedEntries(es []Entry) []Entry {
	out := append([]Entry(nil), es...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].Rel < out[i].Rel {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestSearchAgreesWithBruteForce checks that the trigram narrowing never
// loses a match: every query's hits equal a scan of every file.
func TestSearchAgreesWithBruteForce(t *testing.T) {
	root, es := corpus(t)
	ix, _ := build(t, root, es, nil)
	queries := []Query{
		{Pattern: "func"}, {Pattern: "FUNC"}, {Pattern: "func", CaseSensitive: true}, {Pattern: "FUNC", CaseSensitive: true},
		{Pattern: "ctx context.Context"}, {Pattern: "ab"}, {Pattern: "x"}, {Pattern: "(a|b)*"},
		{Pattern: `func \w+\(`, Regex: true}, {Pattern: `^package \w+$`, Regex: true},
		{Pattern: `(Errorf|Sprintf)\("`, Regex: true}, {Pattern: `time\.(Second|Millisecond)`, Regex: true},
		{Pattern: `[A-Z]{5,}`, Regex: true}, {Pattern: `err != nil`, Regex: true, CaseSensitive: true},
		{Pattern: "RFC 6902"}, {Pattern: "ünïcödé"}, {Pattern: "…"}, {Pattern: "NoSuchIdentifierAnywhereXyz"},
		{Pattern: `(?s)import.*fmt`, Regex: true}, {Pattern: `a+b+c+`, Regex: true},
		{Pattern: `Registry`, Path: func(p string) bool { return strings.HasPrefix(p, "pkg/tool/") }},
		// The literal scanner and the regexp prefilter.
		{Pattern: "Context"}, {Pattern: "context.CONTEXT"}, {Pattern: "zz"}, {Pattern: "QQ"}, {Pattern: "json:\"", CaseSensitive: true},
		{Pattern: `t\.Fatal`, Regex: true}, {Pattern: `(?i:FUNC) \w+`, Regex: true, CaseSensitive: true},
		{Pattern: "\n"}, {Pattern: "a\nb"}, {Pattern: `\s+$`, Regex: true}, {Pattern: "café"}, {Pattern: "Ünïcödé"},
		{Pattern: `deadline\s+exceeded|Timeout`, Regex: true}, {Pattern: `^\s*//\s*[A-Z]\w+ (is|are) `, Regex: true},
	}
	for _, q := range queries {
		for _, limit := range []int{1, 7, 100000} {
			q := q
			q.Limit, q.Context = limit, 2
			got, _, err := ix.Search(context.Background(), q)
			if err != nil {
				t.Fatalf("%q: %v", q.Pattern, err)
			}
			want := bruteForce(t, root, es, q)
			if len(got) != len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want)) {
				t.Errorf("%q (regex %v, case %v, limit %d): %d hits, brute force %d", q.Pattern, q.Regex, q.CaseSensitive, limit, len(got), len(want))
			}
		}
	}
}

func TestSearchNarrowsWithTheIndex(t *testing.T) {
	root, es := corpus(t)
	ix, _ := build(t, root, es, nil)
	_, st, _ := ix.Search(context.Background(), Query{Pattern: "SchemaViolations", Limit: 1000})
	if !st.Indexed || st.Candidates >= ix.Len()/4 {
		t.Fatalf("literal search did not narrow: %+v of %d files", st, ix.Len())
	}
	_, st, _ = ix.Search(context.Background(), Query{Pattern: `x.`, Regex: true, Limit: 1})
	if st.Indexed {
		t.Fatalf("a two-character pattern cannot use trigrams: %+v", st)
	}
	_, st, _ = ix.Search(context.Background(), Query{Pattern: `(Errorf|Sprintf)\(`, Regex: true, Limit: 1000})
	if !st.Indexed {
		t.Fatalf("an alternation of literals should narrow: %+v", st)
	}
}

func TestHitShape(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\r\nthree héllo héllo\nfour\nfive\n"), 0o644)
	ix, _ := build(t, dir, []Entry{{Rel: "a.txt"}}, nil)
	hits, _, err := ix.Search(context.Background(), Query{Pattern: "HÉLLO", Limit: 10, Context: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []Hit{{Path: "a.txt", Line: 3, Column: 7, Text: "three héllo héllo", Before: []string{"one", "two"}, After: []string{"four", "five"}}}
	if !reflect.DeepEqual(hits, want) {
		t.Fatalf("hits = %+v\nwant %+v", hits, want)
	}
	hits, _, _ = ix.Search(context.Background(), Query{Pattern: "one", Limit: 10, Context: 0})
	if len(hits) != 1 || len(hits[0].Before) != 0 || len(hits[0].After) != 0 {
		t.Fatalf("context 0: %+v", hits)
	}
	if _, err := Compile(Query{Pattern: "a(b", Regex: true}); err == nil || !strings.Contains(err.Error(), "missing closing )") {
		t.Fatalf("bad regex error = %v", err)
	}
}

// TestBuildSkipsBinaryLargeAndSymlinks: every listed file that is not a
// regular text file inside the root is skipped, and the build never blocks
// on one (opening a FIFO for reading waits for a writer).
func TestBuildSkipsBinaryLargeAndSymlinks(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(dir, "text"), []byte("hello world"), 0o644)
	os.WriteFile(filepath.Join(dir, "bin"), []byte("hello\x00world"), 0o644)
	os.WriteFile(filepath.Join(dir, "big"), bytes.Repeat([]byte("hello "), MaxFileSize/5), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(dir, "link"))
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(outside, "x"), []byte("OUTSIDE the repository"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "out"))                          // a directory leading out
	os.Symlink(filepath.Join("..", "out"), filepath.Join(dir, "sub", "up")) // and a longer way there
	names := []string{"text", "bin", "big", "link", "gone", "out/x", "sub/up/x", "sub/../out/x"}
	names = append(names, safefiletest.Names(safefiletest.Make(t, dir))...)
	var es []Entry
	for _, n := range names {
		es = append(es, Entry{Rel: n})
	}
	var ix *Index
	safefiletest.Prompt(t, "the build", func() { ix, _ = build(t, dir, es, nil) })
	if m := ix.Meta(); m.Files != 1 || m.Skipped != len(names)-1 || m.Bytes != 11 || ix.File(0).Path != "text" {
		t.Fatalf("meta = %+v of %d entries", m, len(names))
	}
	if h, _, _ := ix.Search(context.Background(), Query{Pattern: "OUTSIDE", Limit: 5}); len(h) != 0 {
		t.Fatalf("a file outside the root was indexed: %+v", h)
	}
}

func TestIncrementalReusesUnchangedFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(n, s string) { os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644) }
	write("a", "alpha content")
	write("b", "beta content")
	es := []Entry{{Rel: "a"}, {Rel: "b"}}
	prev, _ := build(t, dir, es, nil)
	// Change b on disk without changing its size or time: the build trusts
	// size and mtime, so the old content shows it was not read again.
	fi, _ := os.Stat(filepath.Join(dir, "b"))
	write("b", "BETA CONTENT")
	os.Chtimes(filepath.Join(dir, "b"), fi.ModTime(), fi.ModTime())
	write("a", "alpha changed!")
	next, _ := build(t, dir, es, prev)
	if h, _, _ := next.Search(context.Background(), Query{Pattern: "beta content", CaseSensitive: true, Limit: 5}); len(h) != 1 {
		t.Fatalf("unchanged file not reused: %+v", h)
	}
	if h, _, _ := next.Search(context.Background(), Query{Pattern: "changed", Limit: 5}); len(h) != 1 {
		t.Fatalf("changed file not re-read: %+v", h)
	}
}

func TestCancelledBuildLeavesThePreviousIndex(t *testing.T) {
	root, es := corpus(t)
	_, path := build(t, root, es[:3], nil)
	before, _ := os.ReadFile(path)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Build(ctx, path, Meta{}, openRoot(t, root), es, nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Build = %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatal("the cancelled build changed the index")
	}
	left, _ := filepath.Glob(path + ".tmp-*")
	if len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestOpenRefusesDamagedFiles(t *testing.T) {
	root, es := corpus(t)
	_, path := build(t, root, es[:5], nil)
	good, _ := os.ReadFile(path)
	cases := map[string][]byte{
		"empty":          {},
		"truncated":      good[:len(good)/2],
		"bad magic":      append([]byte("NOTANIDX"), good[8:]...),
		"no footer":      good[:len(good)-1],
		"future version": append(append(append([]byte{}, good[:8]...), 9, 0, 0, 0), good[12:]...),
	}
	for name, data := range cases {
		p := filepath.Join(t.TempDir(), "bad.idx")
		os.WriteFile(p, data, 0o644)
		if ix, err := Open(p); !errors.Is(err, ErrCorrupt) {
			if ix != nil {
				ix.Close()
			}
			t.Errorf("%s: Open = %v, want ErrCorrupt", name, err)
		}
	}
}

func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("some text\nmore text"), 0o644)
	path := filepath.Join(dir, "x.idx")
	Build(context.Background(), path, Meta{}, openRoot(f, dir), []Entry{{Rel: "a"}}, nil, nil)
	good, _ := os.ReadFile(path)
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := parse(data)
		if err != nil {
			return
		}
		// A structurally valid file must search without panicking.
		ix.Search(context.Background(), Query{Pattern: "text", Limit: 10, Context: 1})
		for i := 0; i < ix.Len(); i++ {
			ix.File(i)
		}
	})
}

func runtimeGOROOT() string { return gobuild.Default.GOROOT }

// goSource lists Go's source tree (about 11 000 files, 150 MB), the large
// repository the index's targets are measured on (≥ 50 MB/s to build).
func goSource() (string, []Entry) {
	root := filepath.Join(runtimeGOROOT(), "src")
	var es []Entry
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			es = append(es, Entry{Rel: filepath.ToSlash(rel)})
		}
		return nil
	})
	return root, es
}

// BenchmarkBuildGOROOT indexes Go's source tree (about 150 MB): MB/s.
func BenchmarkBuildGOROOT(b *testing.B) {
	root, es := goSource()
	r := openRoot(b, root)
	path := filepath.Join(b.TempDir(), "x.idx")
	var m Meta
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		if m, err = Build(context.Background(), path, Meta{}, r, es, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(m.Bytes)*float64(b.N)/1e6/b.Elapsed().Seconds(), "MB/s")
	fi, _ := os.Stat(path)
	b.ReportMetric(float64(fi.Size())/float64(m.Bytes), "index/content")
}

// goSearchQueries mirrors test/bench's fixed query set.
var goSearchQueries = []Query{
	{Pattern: "ListenAndServe"},
	{Pattern: "func main()"},
	{Pattern: "errors.New(\""},
	{Pattern: "sync.Mutex"},
	{Pattern: "goroutine leak"},
	{Pattern: "TODO(rsc)"},
	{Pattern: "x509.ParseCertificate"},
	{Pattern: "atomic.AddInt64"},
	{Pattern: `func \(\w+ \*Server\) \w+`, Regex: true},
	{Pattern: `deadline\s+exceeded`, Regex: true},
	{Pattern: `^package (http|tls)$`, Regex: true},
	{Pattern: `fmt\.Errorf\("[a-z]+: %w"`, Regex: true},
}

// BenchmarkSearchGOROOT: each query of the fixed set over an index of Go's
// source tree, limit 20 and 2 context lines as the search tool's defaults.
func BenchmarkSearchGOROOT(b *testing.B) {
	root, es := goSource()
	path := filepath.Join(b.TempDir(), "x.idx")
	if _, err := Build(context.Background(), path, Meta{}, openRoot(b, root), es, nil, nil); err != nil {
		b.Fatal(err)
	}
	ix, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	for _, q := range goSearchQueries {
		q.Limit, q.Context = 20, 2
		b.Run(q.Pattern, func(b *testing.B) {
			var st Stats
			for i := 0; i < b.N; i++ {
				_, st, err = ix.Search(context.Background(), q)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.Candidates), "candidates")
			b.ReportMetric(float64(st.Scanned), "scanned")
		})
	}
}
