package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// ErrChanged is returned by ReplaceIfUnchanged when the file did not hold
// what the caller expected at the moment of the replacement: the file is
// left holding what it held (a later write of its owner included).
var ErrChanged = errors.New("the file changed")

// errNoExchange says the system or the file system cannot exchange two
// names atomically; ReplaceIfUnchanged then falls back to compare-then-rename.
var errNoExchange = errors.New("atomic exchange of two files is not supported here")

// exchangeNames swaps the names a and b, both existing files in one
// directory, in one step where the system has a call for it:
// exchange_linux.go and exchange_darwin.go set it in their init. Windows
// has none, so ReplaceIfUnchanged compares again right before an ordinary
// rename.
var exchangeNames = func(a, b string) error { return errNoExchange }

// exchangeNever: the system has no exchange at all (Windows), so it is
// never tried; on Linux and macOS it is, and a file system without it
// falls back (see neverExchange).
const exchangeNever = runtime.GOOS != "linux" && runtime.GOOS != "darwin"

// exchange is exchangeNames, a variable of its own so that a test can take
// the fallback.
var exchange = func(a, b string) error { return exchangeNames(a, b) }

// beforeSwap is called after the new content is written and synced, just
// before it takes the file's place: a test rewrites the file there, as a
// client rewriting its config at the worst moment would.
var beforeSwap = func() {}

// ReplaceIfUnchanged replaces the regular file at path with data, provided
// that path still holds exactly expect at the moment it is replaced. Unlike
// a comparison followed by a rename, which loses whatever another process
// writes between the two, the new content is written (and synced) beside
// path and then exchanged with it in one step (renameat2 RENAME_EXCHANGE on
// Linux, renamex_np RENAME_SWAP on macOS): the file that comes out is
// exactly the one that was replaced, whenever it was written. If it is not
// expect, the two are exchanged back and ErrChanged is returned; nothing
// is lost. If it is, it is kept under the name keep (which must not exist and
// is never overwritten), or removed if keep is "". The new file gets path's
// permissions and, where the process may give them, its owner and group.
//
// Where no exchange is possible (Windows, file systems without it) the file
// is compared again right before an ordinary rename (on Windows MoveFileEx,
// replacing and written through): a write between that last comparison
// and the rename is lost. See docs/decisions/0037-adopt-edits-in-place.md
// and 0047-windows-socket.md.
//
// A writer that rewrites path in place (truncating it) rather than by
// renaming a new file over it is not seen by any of this: its write lands
// in whichever file holds the name when it opens it.
func ReplaceIfUnchanged(path string, data, expect []byte, keep string) error {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replace %s: %w (it was removed)", path, ErrChanged)
	}
	if err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("replace %s: not a regular file", path)
	}
	if keep != "" {
		if _, err := os.Lstat(keep); err == nil {
			return fmt.Errorf("replace %s: keep its content as %s: %w", path, keep, fs.ErrExist)
		}
	}
	// The file as it is now, held open: if the exchange brings out this very
	// file, nobody renamed another over it in between; anything else is
	// put back at once, so that a reader sees the new text for no longer
	// than an open and a stat.
	cur, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replace %s: %w (it was removed)", path, ErrChanged)
	}
	if err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	defer cur.Close()
	if same, err := holds(cur, expect); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	} else if !same {
		return fmt.Errorf("replace %s: %w", path, ErrChanged)
	}
	if neverExchange {
		// No exchange will follow, so nothing needs the file held: let it
		// go before the slow part (writing and syncing the new file). On
		// Windows a handle on it makes a client's save, a rename over it,
		// fail for as long as it is held.
		cur.Close()
		return replaceWithoutExchange(path, data, expect, keep, info)
	}
	dir := filepath.Dir(path)
	tmp, err := writeNew(path, data, info)
	if err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	removeTmp := true // false once tmp may hold something that is not ours
	defer func() {
		if removeTmp {
			os.Remove(tmp)
		}
	}()
	ours, err := os.Open(tmp) // held open, as cur is, so that its inode number is not reused
	if err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	defer ours.Close()
	beforeSwap()
	switch err := exchange(tmp, path); {
	case errors.Is(err, errNoExchange):
		// Nothing was exchanged: let both files go before the rename. On
		// Windows a handle (Go opens none with FILE_SHARE_DELETE) on
		// either name makes the rename fail with a sharing violation.
		ours.Close()
		cur.Close()
		return replaceByRename(path, tmp, expect, keep, info)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("replace %s: %w (it was removed)", path, ErrChanged)
	case err != nil:
		return fmt.Errorf("replace %s: %w", path, err)
	}
	// tmp is now the file path was: whatever a writer put there, up to the
	// exchange itself. (Nobody else writes at tmp, a name of our own.)
	removeTmp = false
	out, err := os.Open(tmp)
	if err != nil {
		return fmt.Errorf("replace %s: %w; it was exchanged with %s, which holds what it held", path, err, tmp)
	}
	defer out.Close()
	if same, err := sameFile(out, cur); err != nil || !same {
		return putBack(path, tmp, ours, out)
	}
	// The same file; one rewritten in place since it was read is put back
	// too.
	if same, err := holds(cur, expect); err != nil || !same {
		return putBack(path, tmp, ours, out)
	}
	if keep == "" {
		err = os.Remove(tmp)
	} else {
		err = renameNoReplace(tmp, keep)
	}
	if err != nil {
		return fmt.Errorf("replaced %s, but what it held stays at %s: %w", path, tmp, err)
	}
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("replace %s: sync %s: %w", path, dir, err)
	}
	return nil
}

// maxPutBack bounds putBack's exchanges: each one past the first takes a
// writer renaming yet another file over path in the moment between two.
const maxPutBack = 16

// putBack puts back the file an exchange took out of path (out, now at
// tmp) because it was not the one expected. Exchanging again brings out
// what path holds by then: the file placed there last (placed, at first
// our own) unless the file's owner renamed a newer one over it meanwhile.
// A newer one goes back in its turn, and the file it superseded is dropped,
// as that write dropped it. Every file compared is held open, so that no
// inode number is reused while they are compared.
func putBack(path, tmp string, placed, out *os.File) error {
	for range maxPutBack {
		if err := exchange(tmp, path); err != nil {
			return fmt.Errorf("%s changed while it was being replaced, and putting it back failed; what it held is at %s: %w", path, tmp, err)
		}
		came, err := os.Open(tmp)
		if err != nil {
			return fmt.Errorf("%s changed while it was being replaced and was put back; %s is left as it is: %w", path, tmp, err)
		}
		defer came.Close()
		same, err := sameFile(came, placed)
		if err != nil {
			return fmt.Errorf("%s changed while it was being replaced and was put back; %s is left as it is: %w", path, tmp, err)
		}
		if same {
			if err := os.Remove(tmp); err != nil {
				return fmt.Errorf("replace %s: %w; and %s is left: %v", path, ErrChanged, tmp, err)
			}
			SyncDir(filepath.Dir(path)) // path holds what it held; best effort
			return fmt.Errorf("replace %s: %w", path, ErrChanged)
		}
		placed, out = out, came
	}
	return fmt.Errorf("%s is being rewritten over and over; it was put back, and the last file taken out of it is at %s", path, tmp)
}

// sameFile says whether a and b are one file.
func sameFile(a, b *os.File) (bool, error) {
	ai, err := a.Stat()
	if err != nil {
		return false, err
	}
	bi, err := b.Stat()
	if err != nil {
		return false, err
	}
	return os.SameFile(ai, bi), nil
}

// neverExchange says the system has no atomic exchange at all (Windows),
// known without trying: see replaceWithoutExchange.
var neverExchange = exchangeNever

// replaceWithoutExchange writes the new file and renames it over path as
// replaceByRename does, with no handle on path held meanwhile (the caller
// has compared and closed it).
func replaceWithoutExchange(path string, data, expect []byte, keep string, info fs.FileInfo) error {
	tmp, err := writeNew(path, data, info)
	if err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	defer os.Remove(tmp) // gone once renamed
	beforeSwap()
	return replaceByRename(path, tmp, expect, keep, info)
}

// replaceByRename is the fallback without an atomic exchange: the content
// to keep is copied first, the file is compared once more, and the new
// file renamed over it with nothing slow (no sync) in between. A write
// between that last comparison and the rename is lost.
func replaceByRename(path, tmp string, expect []byte, keep string, info fs.FileInfo) error {
	current, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !bytes.Equal(current, expect)) {
		return fmt.Errorf("replace %s: %w", path, ErrChanged)
	}
	if err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	if keep != "" {
		if err := writeExclusive(keep, current, info); err != nil {
			return fmt.Errorf("replace %s: keep its content: %w", path, err)
		}
	}
	current, err = os.ReadFile(path)
	if err != nil || !bytes.Equal(current, expect) {
		if keep != "" {
			os.Remove(keep)
		}
		return fmt.Errorf("replace %s: %w", path, ErrChanged)
	}
	beforeRename(tmp, path)
	if err := renameOver(tmp, path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	if err := SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("replace %s: sync: %w", path, err)
	}
	return nil
}

// beforeRename is called just before the fallback's rename; a test looks
// there for handles left open.
var beforeRename = func(tmp, path string) {}

// holds says whether f, read from its start, holds exactly want.
func holds(f *os.File, want []byte) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() != int64(len(want)) {
		return false, nil
	}
	got := make([]byte, len(want)+1) // one more: a file grown since Stat
	n, err := f.ReadAt(got, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return bytes.Equal(got[:n], want), nil
}

// writeNew writes data to a new temporary file beside path, with the
// permissions (and, where allowed, the owner) of info, synced, and returns
// its name.
func writeNew(path string, data []byte, info fs.FileInfo) (string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*")
	if err != nil {
		return "", err
	}
	if err := fill(f, data, info); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// writeExclusive creates name, which must not exist, holding data with the
// permissions (and owner) of info, synced.
func writeExclusive(name string, data []byte, info fs.FileInfo) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if err := fill(f, data, info); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// sameOwner gives a new file the owner of the one it replaces where the
// system has owners to give (owner_unix.go sets it in its init); on
// Windows it does nothing: a new file takes its directory's inherited ACL,
// as the file it replaces did.
var sameOwner = func(*os.File, fs.FileInfo) {}

// fill writes data to f, gives it info's permissions and owner, syncs and
// closes it.
func fill(f *os.File, data []byte, info fs.FileInfo) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(info.Mode().Perm())
	}
	if err == nil {
		sameOwner(f, info)
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// renameNoReplace renames old to new unless new exists, which it never
// overwrites: a hard link fails if new exists. Where hard links are not
// possible, it checks and renames, which a name created in between defeats.
func renameNoReplace(old, new string) error {
	err := os.Link(old, new)
	if err == nil {
		return os.Remove(old)
	}
	if errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, serr := os.Lstat(new); serr == nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: fs.ErrExist}
	}
	return os.Rename(old, new)
}
