package adopt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/atomicfile"
)

// A backup lies beside its file, named for the moment of the write (to the
// nanosecond) and the content the write left:
//
//	FILE.hearth-backup-20261125T233000.123456789Z-3f9a1c2b0d4e
//
// with "-2", "-3"... after it should that name be taken: a backup is never
// overwritten. It is the very file the write replaced, so Undo needs
// nothing but the directory: it restores the backup whose digest (the name's
// last part) is the file's as it is now, that is, the one made by the write
// that left the file as it is. Backups named to the second by earlier
// versions are read as well.
const (
	backupInfix = ".hearth-backup-"
	stampLayout = "20060102T150405.000000000Z" // written: fixed width
	parseLayout = "20060102T150405Z"           // read: the fraction is optional
	digestLen   = 12                           // hex digits of SHA-256: enough to notice an edit, not a defence
)

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:digestLen]
}

// ErrChanged is returned when a file changed between being read and being
// replaced: the plan was made from another text, so it is not applied, and
// the file is left holding the other text.
var ErrChanged = errors.New("the file changed since adopt read it")

// changedError says which file changed, and whether adopt saw it before
// writing anything or only at the replacement.
type changedError struct {
	path    string
	writing bool
}

func (e *changedError) Error() string {
	when := "since adopt read it"
	if e.writing {
		when = "while adopt was writing it"
	}
	return e.path + " changed " + when + "; nothing was changed, run adopt again"
}

func (e *changedError) Is(target error) bool { return target == ErrChanged }

// beforeReplace is called after the file is read and compared with the
// plan's text, just before it is replaced: a test rewrites the file there,
// as a client does at the worst moment.
var beforeReplace = func() {}

// Write applies a plan that changes its file: it replaces the file, in one
// step, with the new text (with the file's permissions and owner), but only
// if the file still holds the text the plan was made from at that very
// moment (atomicfile.ReplaceIfUnchanged); the file it replaced becomes the
// backup beside it. A client that rewrote the file at any moment before
// keeps its edit and ErrChanged is returned. A symbolic link is followed,
// so the file it names is written and the link stays. It returns the
// backup's path.
func Write(p *Plan, now time.Time) (string, error) {
	if p.File.Err != nil {
		return "", fmt.Errorf("%s is not changed: %w", p.File.Path, p.File.Err)
	}
	if !p.Changed() {
		return "", nil
	}
	target, err := filepath.EvalSymlinks(p.File.Path)
	if err != nil {
		return "", err
	}
	current, err := os.ReadFile(target)
	if err != nil {
		return "", err
	}
	if !bytes.Equal(current, p.File.Src) {
		return "", &changedError{path: p.File.Path}
	}
	base := target + backupInfix + now.UTC().Format(stampLayout) + "-" + digest(p.New)
	backup := base
	for n := 2; ; n++ {
		if _, err := os.Lstat(backup); errors.Is(err, fs.ErrNotExist) {
			break
		}
		backup = base + "-" + strconv.Itoa(n)
	}
	beforeReplace()
	err = atomicfile.ReplaceIfUnchanged(target, p.New, p.File.Src, backup)
	if errors.Is(err, atomicfile.ErrChanged) {
		return "", &changedError{path: p.File.Path, writing: true}
	}
	if err != nil {
		return "", err
	}
	return backup, nil
}

// Backup is one backup adopt made of a file.
type Backup struct {
	Path   string
	Stamp  string // when adopt wrote the file
	Digest string // of what adopt wrote
	at     time.Time
	seq    int // 1, or the n of a "-n" that made the name unique
}

// Backups lists the backups of the file at path, oldest first.
func Backups(path string) ([]Backup, error) {
	target, err := filepath.EvalSymlinks(path)
	if os.IsNotExist(err) {
		target = path // the file is gone; its backups may not be
	} else if err != nil {
		return nil, err
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Backup
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base+backupInfix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if b, ok := parseBackup(rest); ok {
			b.Path = filepath.Join(dir, e.Name())
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].at.Equal(out[j].at) {
			return out[i].at.Before(out[j].at)
		}
		return out[i].seq < out[j].seq
	})
	return out, nil
}

// parseBackup reads STAMP-DIGEST[-N], the part of a backup's name after
// the infix.
func parseBackup(rest string) (Backup, bool) {
	stamp, tail, ok := strings.Cut(rest, "-")
	if !ok {
		return Backup{}, false
	}
	at, err := time.Parse(parseLayout, stamp)
	if err != nil {
		return Backup{}, false
	}
	sum, n, numbered := strings.Cut(tail, "-")
	seq := 1
	if numbered {
		if seq, err = strconv.Atoi(n); err != nil || seq < 2 || strconv.Itoa(seq) != n {
			return Backup{}, false
		}
	}
	if len(sum) != digestLen || strings.Trim(sum, "0123456789abcdef") != "" {
		return Backup{}, false
	}
	return Backup{Stamp: stamp, Digest: sum, at: at, seq: seq}, true
}

// UndoResult says what Undo did with one file.
type UndoResult int

const (
	NoBackup  UndoResult = iota // adopt never wrote the file (or every write is undone)
	Restored                    // the file holds its content from before the write that left it as it was
	Changed                     // the file changed since adopt wrote it; left as it is
	Ambiguous                   // several backups with different contents fit the file; left as it is
)

// ErrAmbiguous is Undo's error when more than one write of adopt's left
// the file as it is now, from different texts: which one to restore is the
// user's choice.
var ErrAmbiguous = errors.New("several of adopt's backups were made from different texts by writes that left the file as it is now")

// Undo restores the file at path from the backup made by the write that
// left the file as it is now (its digest is the one in the backup's name),
// and then removes that backup (it is the file again), so that a second
// Undo steps back over the write before it. The file is replaced only if
// it still holds what it held when compared (atomicfile.ReplaceIfUnchanged),
// so a client's rewrite meanwhile is kept. A file no backup fits (changed
// since adopt wrote it) is left as it is, and so are its backups; the
// result names the latest. When several backups with different contents
// fit, the file is left as it is and ErrAmbiguous names them.
func Undo(path string) (UndoResult, Backup, error) {
	backups, err := Backups(path)
	if err != nil || len(backups) == 0 {
		return NoBackup, Backup{}, err
	}
	latest := backups[len(backups)-1]
	target, err := filepath.EvalSymlinks(path)
	if os.IsNotExist(err) {
		return Changed, latest, nil // removed since: not adopt's to recreate
	}
	if err != nil {
		return NoBackup, latest, err
	}
	current, err := os.ReadFile(target)
	if err != nil {
		return NoBackup, latest, err
	}
	var fit []Backup
	for _, b := range backups {
		if b.Digest == digest(current) {
			fit = append(fit, b)
		}
	}
	if len(fit) == 0 {
		return Changed, latest, nil
	}
	chosen := fit[len(fit)-1]
	old, err := os.ReadFile(chosen.Path)
	if err != nil {
		return NoBackup, chosen, err
	}
	for _, b := range fit[:len(fit)-1] {
		// The same text written twice, from the same text, is one write
		// to undo; from different texts, a guess.
		other, err := os.ReadFile(b.Path)
		if err != nil {
			return NoBackup, b, err
		}
		if !bytes.Equal(other, old) {
			var names []string
			for _, b := range fit {
				names = append(names, filepath.Base(b.Path))
			}
			return Ambiguous, chosen, fmt.Errorf("%w (%s); restore the one you mean by hand", ErrAmbiguous, strings.Join(names, ", "))
		}
	}
	err = atomicfile.ReplaceIfUnchanged(target, old, current, "")
	if errors.Is(err, atomicfile.ErrChanged) {
		return Changed, chosen, nil
	}
	if err != nil {
		return NoBackup, chosen, err
	}
	if err := os.Remove(chosen.Path); err != nil {
		return Restored, chosen, fmt.Errorf("restored %s, but its backup stays: %w", path, err)
	}
	return Restored, chosen, atomicfile.SyncDir(filepath.Dir(target))
}
