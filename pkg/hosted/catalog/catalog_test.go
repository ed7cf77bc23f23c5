package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStoreRoundTripAndPrivacy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "catalog")
	s := Open(dir, nil)
	e := &Entry{Key: "0123abcd", Server: "memory", InitResult: json.RawMessage(`{"serverInfo":{"name":"m"}}`),
		Lists:    map[string][]json.RawMessage{"tools/list": {json.RawMessage(`{"tools":[{"name":"a"},{"name":"b"}]}`), json.RawMessage(`{"tools":[{"name":"c"}]}`)}},
		Recorded: time.Now().UTC()}
	if err := s.Save(e); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "0123abcd.json"): 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v %v, want %o", p, fi.Mode(), err, want)
		}
	}
	got, ok := s.Load("0123abcd")
	if !ok || got.Server != "memory" || got.Version != Version {
		t.Fatalf("load: %+v %v", got, ok)
	}
	if tools, _, _, _ := got.Counts(); tools != 3 {
		t.Fatalf("tools counted %d over two pages, want 3", tools)
	}
	ran := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	s.Touch("0123abcd", ran)
	if got, _ := s.Load("0123abcd"); !got.LastRan.Equal(ran) {
		t.Fatalf("touch: %v", got.LastRan)
	}
	if n := len(s.All()); n != 1 {
		t.Fatalf("all: %d", n)
	}
	if gone, err := s.Forget("0123abcd"); !gone || err != nil {
		t.Fatalf("forget: %v %v", gone, err)
	}
	if gone, err := s.Forget("0123abcd"); gone || err != nil {
		t.Fatalf("forget twice: %v %v", gone, err)
	}
}

// Bad keys and bad files: nothing outside the directory is named, and an
// entry that cannot be trusted is not used.
func TestStoreRefuses(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir, nil)
	for _, key := range []string{"", "abc", "../../etc/passwd", "ABCDEF", "0123abcg", "0123abcd/../x", "0123abcd\x00"} {
		if _, err := s.path(key); err == nil {
			t.Errorf("key %q accepted", key)
		}
		if _, ok := s.Load(key); ok {
			t.Errorf("key %q loaded", key)
		}
		if err := s.Save(&Entry{Key: key, InitResult: json.RawMessage(`{}`)}); err == nil {
			t.Errorf("key %q saved", key)
		}
	}
	for name, body := range map[string]string{
		"aaaa0001": `{`,
		"aaaa0002": `{"version":99,"key":"aaaa0002","initResult":{}}`,
		"aaaa0003": `{"version":1,"key":"bbbb0003","initResult":{}}`,
		"aaaa0004": `{"version":1,"key":"aaaa0004"}`,
	} {
		os.WriteFile(filepath.Join(dir, name+".json"), []byte(body), 0o600)
		if e, ok := s.Load(name); ok {
			t.Errorf("%s loaded: %+v", body, e)
		}
	}
	if n := len(s.All()); n != 0 {
		t.Fatalf("all: %d unusable entries listed", n)
	}
}

func TestUsableTTL(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		ttl  int64
		age  time.Duration
		want bool
	}{{0, time.Hour, true}, {60000, 30 * time.Second, true}, {60000, 2 * time.Minute, false}, {-1, time.Hour, true}} {
		e := &Entry{TTLMillis: tc.ttl, Recorded: now.Add(-tc.age)}
		if got := e.Usable(now); got != tc.want {
			t.Errorf("ttl %d age %v: %v", tc.ttl, tc.age, got)
		}
	}
}

// A changed file is another build; a package runner's package is part of
// the identity.
func TestIdentity(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "server.js")
	os.WriteFile(script, []byte("1"), 0o644)
	node := filepath.Join(dir, "node")
	os.WriteFile(node, []byte("#!/bin/sh\n"), 0o755)
	a := Identify(node, []string{"--flag", "server.js"}, dir)
	if len(a.Files) != 2 || a.Files[1].Path != script {
		t.Fatalf("the interpreter's script is not stamped: %+v", a.Files)
	}
	if !a.Same(Identify(node, []string{"--flag", "server.js"}, dir)) {
		t.Fatal("the same build is not the same")
	}
	os.WriteFile(script, []byte("22"), 0o644)
	if a.Same(Identify(node, []string{"--flag", "server.js"}, dir)) {
		t.Fatal("a changed script is the same build")
	}
	for _, tc := range []struct {
		runner string
		args   []string
		pkg    string
		pinned bool
	}{
		{"npx", []string{"-y", "@modelcontextprotocol/server-memory"}, "@modelcontextprotocol/server-memory", false},
		{"npx", []string{"-y", "@modelcontextprotocol/server-memory@2025.4.1"}, "@modelcontextprotocol/server-memory@2025.4.1", true},
		{"npx", []string{"--package", "pkg@1.2.3", "bin"}, "pkg@1.2.3", true},
		{"npx", []string{"--package=pkg@latest", "bin"}, "pkg@latest", false},
		{"uvx", []string{"mcp-server-git==0.6.2"}, "mcp-server-git==0.6.2", true},
		{"uvx", []string{"--from", "git+https://example.com/x", "tool"}, "git+https://example.com/x", false},
		{"uvx", []string{"mcp-server-git"}, "mcp-server-git", false},
	} {
		pkg, pinned := runnerPackage(tc.runner, tc.args)
		if pkg != tc.pkg || pinned != tc.pinned {
			t.Errorf("%s %v: %q %v, want %q %v", tc.runner, tc.args, pkg, pinned, tc.pkg, tc.pinned)
		}
	}
}

// A 2026-07-28 server's entry has its DiscoverResult in place of an
// initialize result: it is read back from its file (a fresh store, as a
// new daemon reads it), and usable while the DiscoverResult's own ttlMs
// lasts, whatever a 2025 entry's rule.
func TestModernEntry(t *testing.T) {
	dir := t.TempDir()
	recorded := time.Now().UTC().Add(-time.Minute)
	e := &Entry{Key: "4567cdef", Server: "modern", Era: "2026-07-28",
		Discover:          json.RawMessage(`{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":120000}`),
		DiscoverTTLMillis: 120_000, ListTTLMillis: map[string]int64{"tools/list": 60_000},
		ListCaps: json.RawMessage(`{"roots":{},"sampling":{},"elicitation":{}}`),
		Lists:    map[string][]json.RawMessage{"tools/list": {json.RawMessage(`{"tools":[{"name":"a"}],"ttlMs":60000}`)}},
		Recorded: recorded}
	if err := Open(dir, nil).Save(e); err != nil {
		t.Fatal(err)
	}
	got, ok := Open(dir, nil).Load("4567cdef")
	if !ok || got.Discover == nil || got.ListTTLMillis["tools/list"] != 60_000 || string(got.ListCaps) == "" {
		t.Fatalf("a modern entry read back: %+v %v", got, ok)
	}
	if !got.Usable(recorded.Add(119*time.Second)) || got.Usable(recorded.Add(2*time.Minute)) {
		t.Fatal("a modern entry is usable for its DiscoverResult's ttlMs, and no longer")
	}
	zero := *got
	zero.DiscoverTTLMillis = 0
	if zero.Usable(recorded) {
		t.Fatal("a modern entry whose DiscoverResult is stale at once was usable")
	}
}

// A daemon killed in the middle of a Save leaves atomicfile's temporary
// file; the next Open removes those older than any write takes, and leaves
// a fresh one (a writer's, under way), the entries, and other files alone.
func TestOpenSweepsLeftTemporaries(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	write := func(name string, mtime time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	left := write(".0123abcd.json.1234567", old)
	kept := []string{
		write(".0123abcd.json.7654321", time.Now()), // being written
		write("0123abcd.json", old),                 // an entry
		write(".notes.json.1", old),                 // not a key's
		write("0123abcd.json.1", old),               // not hidden: not atomicfile's
	}
	Open(dir, nil)
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the old temporary is still there: %v", err)
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
	Open(filepath.Join(dir, "none"), nil) // no directory yet: nothing to do, nothing made
	if _, err := os.Stat(filepath.Join(dir, "none")); !os.IsNotExist(err) {
		t.Errorf("Open made the directory: %v", err)
	}
}
