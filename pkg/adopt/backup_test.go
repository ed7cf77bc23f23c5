package adopt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonc"
)

// clientWrite rewrites path as Claude Code and editors do: a new file
// renamed over it.
func clientWrite(path, content string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".client*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// TestWriteKeepsAClientEditMadeWhileWriting: a client that rewrites its
// config after adopt compared it, while adopt is writing (the backup, its
// sync), keeps its edit: the write is refused, nothing is left behind,
// and the file holds the client's edit. Comparing first and renaming after
// lost the edit and said "Wrote".
func TestWriteKeepsAClientEditMadeWhileWriting(t *testing.T) {
	path := write(t, []byte(claudeJSON))
	p, _ := load(t, Location{Path: path, Key: "mcpServers", Projects: true}).Plan(Options{})
	edited := strings.Replace(claudeJSON, `"numStartups": 12`, `"numStartups": 13`, 1)
	beforeReplace = func() {
		if err := clientWrite(path, edited); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { beforeReplace = func() {} })
	backup, err := Write(p, time.Now())
	if !errors.Is(err, ErrChanged) {
		t.Errorf("want ErrChanged, got backup %q, error %v", backup, err)
	}
	if err != nil && !strings.Contains(err.Error(), "changed while adopt was writing it; nothing was changed, run adopt again") {
		t.Errorf("the error does not say what happened: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != edited {
		t.Fatalf("the client's edit is lost; the file holds:\n%s", b)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("left beside the file: %v", entries)
	}
}

// TestTwoWritesInOneSecondUndoStepByStep: backups of writes made in the
// same second (here, the same instant) have names of their own, and each
// --undo finds the one to restore by the file's content, not by the
// order of the names. (Named to the second, the second backup's name
// sorted before the first's as often as not, and --undo restored neither.)
func TestTwoWritesInOneSecondUndoStepByStep(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	writeFile(t, path, vscodeUser)
	loc := Location{Client: VSCode, Path: path, Key: "servers", Syntax: jsonc.JSONC}
	now := time.Date(2026, 11, 25, 23, 30, 0, 0, time.UTC)
	p, _ := load(t, loc).Plan(Options{Only: []string{"memory"}})
	if _, err := Write(p, now); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(path)
	p, _ = load(t, loc).Plan(Options{})
	if _, err := Write(p, now); err != nil {
		t.Fatal(err)
	}
	if bs, _ := Backups(path); len(bs) != 2 {
		t.Fatalf("backups: %v", bs)
	}
	for i, want := range []string{string(first), vscodeUser} {
		r, _, err := Undo(path)
		if r != Restored || err != nil {
			t.Fatalf("undo %d: %v %v", i+1, r, err)
		}
		if b, _ := os.ReadFile(path); string(b) != want {
			t.Fatalf("undo %d restored:\n%s\nwant:\n%s", i+1, b, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

// TestBackupNamesAreNeverReused: the same text written at the same instant
// from the same text (the user put the file back by hand in between) gets
// a second backup, numbered, rather than overwriting the first.
func TestBackupNamesAreNeverReused(t *testing.T) {
	path := write(t, []byte(claudeJSON))
	loc := Location{Path: path, Key: "mcpServers"}
	now := time.Date(2026, 11, 25, 23, 30, 0, 0, time.UTC)
	var names []string
	for range 2 {
		p, _ := load(t, loc).Plan(Options{})
		b, err := Write(p, now)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, b)
		writeFile(t, path, claudeJSON) // put back by hand
	}
	if names[1] != names[0]+"-2" {
		t.Fatalf("backups %v: want the second numbered after the first", names)
	}
	for _, n := range names {
		if b, _ := os.ReadFile(n); string(b) != claudeJSON {
			t.Fatalf("backup %s holds:\n%s", n, b)
		}
	}
	if bs, _ := Backups(path); len(bs) != 2 || bs[1].Path != names[1] {
		t.Fatalf("backups in order: %+v", bs)
	}
}

// TestUndoRefusesAnAmbiguousChoice: two backups that both fit the file
// as it is, holding different texts, are the user's to choose from; one
// named to the second (as earlier versions did) is read as well.
func TestUndoRefusesAnAmbiguousChoice(t *testing.T) {
	path := write(t, []byte("written\n"))
	d := digest([]byte("written\n"))
	a := path + backupInfix + "20261125T233000Z-" + d
	b := path + backupInfix + "20261125T233000.000000001Z-" + d
	writeFile(t, a, "one\n")
	writeFile(t, b, "another\n")
	r, _, err := Undo(path)
	if r != Ambiguous || !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), filepath.Base(a)) {
		t.Fatalf("undo: %v %v", r, err)
	}
	if got, _ := os.ReadFile(path); string(got) != "written\n" {
		t.Fatal("the file was touched")
	}
	// With the texts the same, it is one write to undo.
	writeFile(t, b, "one\n")
	if r, got, err := Undo(path); r != Restored || err != nil || got.Path != b {
		t.Fatalf("undo: %v %+v %v", r, got, err)
	}
	if got, _ := os.ReadFile(path); string(got) != "one\n" {
		t.Fatalf("restored %q", got)
	}
	if _, err := os.Stat(a); err != nil {
		t.Fatal("the other backup was removed")
	}
}

var startups = regexp.MustCompile(`"numStartups": (\d+)`)

// TestWriteAndUndoUnderAClient: Claude Code rewrites ~/.claude.json from
// what it holds in memory (without adopt's change), each time counting one
// more start than it reads, while adopt writes and undoes, round after
// round. No write of the client's may be undone: once neither is under
// way, the count it reads back is never below the one it wrote; each
// backup holds exactly the text its write was planned from; nothing else
// is left beside the file. Bounded in rounds; nothing is timed.
func TestWriteAndUndoUnderAClient(t *testing.T) {
	path := write(t, []byte(claudeJSON))
	loc := Location{Path: path, Key: "mcpServers", Projects: true}
	var (
		wg      sync.WaitGroup
		adopt   sync.Mutex // held while adopt writes or undoes
		mu      sync.Mutex
		stop    bool
		lost    string
		written int
	)
	count := func() int {
		b, _ := os.ReadFile(path)
		m := startups.FindSubmatch(b)
		if m == nil {
			return -1
		}
		n, _ := strconv.Atoi(string(m[1]))
		return n
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		last := 12
		for {
			mu.Lock()
			done := stop
			mu.Unlock()
			if done {
				return
			}
			n := count()
			if n < last {
				adopt.Lock() // wait out a write or undo under way
				n = count()
				adopt.Unlock()
				if n < last {
					mu.Lock()
					lost = fmt.Sprintf("the client wrote %d starts and read back %d", last, n)
					mu.Unlock()
					return
				}
			}
			last = n + 1
			if err := clientWrite(path, startups.ReplaceAllString(claudeJSON, fmt.Sprintf(`"numStartups": %d`, last))); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for round := range 50 {
		f, err := Load(loc)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := f.Plan(Options{})
		adopt.Lock()
		backup, err := Write(p, time.Now())
		adopt.Unlock()
		switch {
		case errors.Is(err, ErrChanged):
		case err != nil:
			t.Fatalf("round %d: %v", round, err)
		case backup != "":
			written++
			if b, _ := os.ReadFile(backup); string(b) != string(p.File.Src) {
				t.Fatalf("round %d: the backup is not the text the write was planned from", round)
			}
		}
		adopt.Lock()
		_, _, err = Undo(path)
		adopt.Unlock()
		if err != nil {
			t.Fatalf("round %d: undo: %v", round, err)
		}
	}
	mu.Lock()
	stop = true
	mu.Unlock()
	wg.Wait()
	if lost != "" {
		t.Fatalf("a client write was undone: %s", lost)
	}
	t.Logf("%d of 50 writes applied", written)
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if name := e.Name(); name != "f.json" && !strings.Contains(name, backupInfix) && !strings.HasPrefix(name, ".client") {
			t.Errorf("left behind: %s", name)
		}
	}
}
