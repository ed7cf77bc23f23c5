package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The fallback renames with no handle open on either name: on Windows, a
// handle opened without FILE_SHARE_DELETE (as Go opens every file) makes
// the rename over the file, or of the new file, fail with a sharing
// violation, so the fallback, Windows's only way, never replaced anything.
// /proc/self/fd shows on Linux what would be open there.
func TestFallbackRenamesWithNoHandleOpen(t *testing.T) {
	exchange = func(string, string) error { return errNoExchange }
	var open []string
	beforeRename = func(tmp, path string) {
		entries, _ := os.ReadDir("/proc/self/fd")
		for _, e := range entries {
			target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
			if err == nil && (target == tmp || target == path) {
				open = append(open, target)
			}
		}
	}
	t.Cleanup(func() { exchange = exchangeNames; beforeRename = func(string, string) {} })
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceIfUnchanged(path, []byte("new"), []byte("old"), path+".bak"); err != nil {
		t.Fatal(err)
	}
	if len(open) != 0 {
		t.Fatalf("open while renaming: %v", open)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("the file holds %q", b)
	}
	if b, _ := os.ReadFile(path + ".bak"); string(b) != "old" {
		t.Fatalf("the kept file holds %q", b)
	}
}

// Where no exchange exists at all (Windows), the client's file is not held
// open while the new file is written and synced: on Windows that handle
// made a client's save, a rename over its file, fail with "access denied"
// for that whole time (seen under Wine). A client that saves then keeps
// its write, and the replacement is refused.
func TestNoExchangeHoldsNothingWhileWriting(t *testing.T) {
	neverExchange = true
	t.Cleanup(func() { neverExchange = exchangeNever; beforeSwap = func() {} })
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	var open []string
	beforeSwap = func() {
		entries, _ := os.ReadDir("/proc/self/fd")
		for _, e := range entries {
			if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == path {
				open = append(open, target)
			}
		}
		clientWrite(t, path, "the client's save")
	}
	err := ReplaceIfUnchanged(path, []byte("new"), []byte("old"), path+".bak")
	if len(open) != 0 {
		t.Fatalf("held open while the new file was written: %v", open)
	}
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("want ErrChanged, got %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "the client's save" {
		t.Fatalf("the file holds %q", b)
	}
	onlyEntries(t, filepath.Dir(path), "config.json")
}
