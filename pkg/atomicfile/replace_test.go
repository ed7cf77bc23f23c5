package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// modes runs a test with the atomic exchange and with the fallback that
// compares again before renaming.
func modes(t *testing.T, f func(t *testing.T)) {
	t.Run("exchange", func(t *testing.T) {
		probe := t.TempDir()
		a, b := filepath.Join(probe, "a"), filepath.Join(probe, "b")
		os.WriteFile(a, nil, 0o600)
		os.WriteFile(b, nil, 0o600)
		if err := exchangeNames(a, b); errors.Is(err, errNoExchange) {
			t.Skip("no atomic exchange on this system or file system; the fallback is tested below")
		}
		f(t)
	})
	t.Run("fallback", func(t *testing.T) {
		exchange = func(string, string) error { return errNoExchange }
		t.Cleanup(func() { exchange = exchangeNames })
		f(t)
	})
}

func onlyEntries(t *testing.T, dir string, want ...string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("directory holds %v, want %v", got, want)
	}
}

func TestReplaceIfUnchangedKeepsWhatItReplaced(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		p, keep := filepath.Join(dir, "f"), filepath.Join(dir, "f.kept")
		os.WriteFile(p, []byte("old\n"), 0o640)
		os.Chmod(p, 0o640)
		if err := ReplaceIfUnchanged(p, []byte("new\n"), []byte("old\n"), keep); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != "new\n" {
			t.Fatalf("file holds %q", b)
		}
		if b, _ := os.ReadFile(keep); string(b) != "old\n" {
			t.Fatalf("kept %q", b)
		}
		for _, name := range []string{p, keep} {
			if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o640 {
				t.Fatalf("%s has mode %v, want the file's 0640", name, fi.Mode())
			}
		}
		onlyEntries(t, dir, "f", "f.kept")
		// Without keep, what was replaced is removed.
		if err := ReplaceIfUnchanged(p, []byte("newer\n"), []byte("new\n"), ""); err != nil {
			t.Fatal(err)
		}
		onlyEntries(t, dir, "f", "f.kept")
		// An existing keep is never overwritten, and nothing is replaced.
		err := ReplaceIfUnchanged(p, []byte("x"), []byte("newer\n"), keep)
		if !errors.Is(err, fs.ErrExist) {
			t.Fatalf("want ErrExist, got %v", err)
		}
		if b, _ := os.ReadFile(keep); string(b) != "old\n" {
			t.Fatal("keep was overwritten")
		}
		if b, _ := os.ReadFile(p); string(b) != "newer\n" {
			t.Fatal("replaced although keep existed")
		}
	})
}

// TestReplaceIfUnchangedSeesAWriteAtTheLastMoment: a client that renames
// its new config over the file after the new content is written and
// synced, just before it would take the file's place, keeps its write; the
// replacement is refused and leaves nothing behind. (Comparing first and
// renaming after lost this write.)
func TestReplaceIfUnchangedSeesAWriteAtTheLastMoment(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		p, keep := filepath.Join(dir, "f"), filepath.Join(dir, "f.kept")
		os.WriteFile(p, []byte("planned against\n"), 0o600)
		beforeSwap = func() { clientWrite(t, p, "the client's edit\n") }
		t.Cleanup(func() { beforeSwap = func() {} })
		err := ReplaceIfUnchanged(p, []byte("adopt's\n"), []byte("planned against\n"), keep)
		if !errors.Is(err, ErrChanged) {
			t.Fatalf("want ErrChanged, got %v", err)
		}
		if b, _ := os.ReadFile(p); string(b) != "the client's edit\n" {
			t.Fatalf("the client's edit is lost: the file holds %q", b)
		}
		onlyEntries(t, dir, "f")
	})
}

func TestReplaceIfUnchangedOfARemovedFile(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "f")
		os.WriteFile(p, []byte("a"), 0o600)
		beforeSwap = func() { os.Remove(p) }
		t.Cleanup(func() { beforeSwap = func() {} })
		if err := ReplaceIfUnchanged(p, []byte("b"), []byte("a"), filepath.Join(dir, "k")); !errors.Is(err, ErrChanged) {
			t.Fatalf("want ErrChanged, got %v", err)
		}
		onlyEntries(t, dir)
	})
}

// TestSwapBackKeepsTheNewestWrite: when the exchange brings out another
// file than expected, it is exchanged back; if the client wrote again in
// between, that newer write is what stays in place.
func TestSwapBackKeepsTheNewestWrite(t *testing.T) {
	dir := t.TempDir()
	p, keep := filepath.Join(dir, "f"), filepath.Join(dir, "f.kept")
	os.WriteFile(p, []byte("planned against\n"), 0o600)
	calls := 0
	exchange = func(a, b string) error {
		calls++
		if err := exchangeNames(a, b); err != nil {
			return err
		}
		if calls == 1 {
			clientWrite(t, p, "written after the exchange\n")
		}
		return nil
	}
	t.Cleanup(func() { exchange = exchangeNames; beforeSwap = func() {} })
	beforeSwap = func() { clientWrite(t, p, "written before the exchange\n") }
	probe := filepath.Join(dir, "probe")
	os.WriteFile(probe, nil, 0o600)
	if errors.Is(exchangeNames(probe, p), errNoExchange) {
		t.Skip("no atomic exchange here")
	}
	exchangeNames(probe, p) // back as it was
	os.Remove(probe)
	err := ReplaceIfUnchanged(p, []byte("adopt's\n"), []byte("planned against\n"), keep)
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("want ErrChanged, got %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "written after the exchange\n" {
		t.Fatalf("the file holds %q, want the client's latest write", b)
	}
	onlyEntries(t, dir, "f")
}

// TestReplaceIfUnchangedUnderAWriter: a client rewrites the file (by
// rename, each time from what it reads, adding one) while it is replaced
// again and again. No client write may be undone: once no replacement is
// under way, the count the client reads back is never below the one it
// wrote. (While one is under way, a reader may glimpse the replacement's
// text for as long as it takes to see that the exchange brought out
// another file and to exchange back; the client waits that out rather
// than write from it.) Bounded in rounds; nothing is timed.
func TestReplaceIfUnchangedUnderAWriter(t *testing.T) {
	modes(t, func(t *testing.T) {
		if strings.HasSuffix(t.Name(), "fallback") && os.Getenv("ATOMICFILE_STRESS_FALLBACK") == "" {
			t.Skip("the fallback leaves a window between its last comparison and the rename")
		}
		dir := t.TempDir()
		p := filepath.Join(dir, "f")
		os.WriteFile(p, []byte("0 adopt:0\n"), 0o600)
		var (
			wg      sync.WaitGroup
			calling sync.Mutex // held while a replacement is under way
			mu      sync.Mutex
			stop    bool
			lost    string
		)
		read := func() (n, a int, b []byte) {
			b, _ = os.ReadFile(p)
			fmt.Sscanf(string(b), "%d adopt:%d", &n, &a)
			return n, a, b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := 0
			for {
				mu.Lock()
				done := stop
				mu.Unlock()
				if done {
					return
				}
				n, a, _ := read()
				if n < last {
					calling.Lock() // no replacement under way
					n, a, _ = read()
					calling.Unlock()
					if n < last {
						mu.Lock()
						_, _, raw := read()
						lost = fmt.Sprintf("the client wrote %d and read back %d (now %q)", last, n, raw)
						mu.Unlock()
						return
					}
				}
				last = n + 1
				if err := clientWriteErr(p, fmt.Sprintf("%d adopt:%d\n", last, a)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		replaced := 0
		for round := 0; round < 200; round++ {
			n, a, b := read()
			calling.Lock()
			err := ReplaceIfUnchanged(p, []byte(fmt.Sprintf("%d adopt:%d\n", n, a+1)), b, "")
			calling.Unlock()
			if err == nil {
				replaced++
			} else if !errors.Is(err, ErrChanged) {
				t.Error(err)
			}
		}
		mu.Lock()
		stop = true
		mu.Unlock()
		wg.Wait()
		if lost != "" {
			t.Fatalf("a client write was undone: %s", lost)
		}
		t.Logf("%d of 200 replacements applied", replaced)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.Name() != "f" && !strings.HasPrefix(e.Name(), ".client") {
				t.Errorf("left behind: %s", e.Name())
			}
		}
	})
}

// clientWrite rewrites path as an editor or a client does: a new file
// renamed over it.
func clientWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := clientWriteErr(path, content); err != nil {
		t.Fatal(err)
	}
}

func clientWriteErr(path, content string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".client*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write([]byte(content)); err != nil {
		f.Close()
		return err
	}
	f.Close()
	return os.Rename(f.Name(), path)
}
