package adopt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/atomicfile"
)

// A backup lies beside its file, named for the moment of the write and the
// content the write left:
//
//	FILE.hearth-backup-20261125T233000Z-3f9a1c2b0d4e
//
// so that Undo needs nothing but the directory: it restores the latest
// backup only while the file still holds exactly what adopt wrote (its
// digest is the name's last part).
const (
	backupInfix = ".hearth-backup-"
	stampLayout = "20060102T150405Z"
	digestLen   = 12 // hex digits of SHA-256: enough to notice an edit, not a defence
)

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:digestLen]
}

// ErrChanged is returned when a file changed between being read and being
// written: the plan was made from another text, so it is not applied.
var ErrChanged = errors.New("the file changed since adopt read it; run adopt again")

// Write applies a plan that changes its file: it backs the file up beside
// itself, then replaces it atomically with the new text, keeping its
// permissions. A symbolic link is followed, so the file it names is
// written and the link stays. It returns the backup's path.
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
	info, err := os.Stat(target)
	if err != nil {
		return "", err
	}
	current, err := os.ReadFile(target)
	if err != nil {
		return "", err
	}
	if !bytes.Equal(current, p.File.Src) {
		return "", fmt.Errorf("%s: %w", p.File.Path, ErrChanged)
	}
	backup := target + backupInfix + now.UTC().Format(stampLayout) + "-" + digest(p.New)
	if _, err := os.Lstat(backup); err == nil {
		return "", fmt.Errorf("%s: the backup %s already exists; run adopt again in a second", p.File.Path, filepath.Base(backup))
	}
	perm := info.Mode().Perm()
	if err := atomicfile.Write(backup, p.File.Src, perm); err != nil {
		return "", fmt.Errorf("back up %s: %w", p.File.Path, err)
	}
	if err := atomicfile.Write(target, p.New, perm); err != nil {
		return "", err
	}
	return backup, nil
}

// Backup is one backup adopt made of a file.
type Backup struct {
	Path   string
	Stamp  string // when adopt wrote the file
	Digest string // of what adopt wrote
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
		stamp, sum, ok := strings.Cut(rest, "-")
		if _, err := time.Parse(stampLayout, stamp); !ok || err != nil || len(sum) != digestLen {
			continue
		}
		out = append(out, Backup{Path: filepath.Join(dir, e.Name()), Stamp: stamp, Digest: sum})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Stamp < out[j].Stamp })
	return out, nil
}

// UndoResult says what Undo did with one file.
type UndoResult int

const (
	NoBackup UndoResult = iota // adopt never wrote the file (or every write is undone)
	Restored                   // the file holds its content from before adopt's last write
	Changed                    // the file changed since adopt wrote it; left as it is
)

// Undo restores the file at path from its latest backup, if the file still
// holds exactly what adopt wrote, and then removes that backup (it is the
// file again), so that a second Undo steps back over the write before it.
// A file changed since adopt wrote it is left as it is, and so is its
// backup, which the result names.
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
	if digest(current) != latest.Digest {
		return Changed, latest, nil
	}
	old, err := os.ReadFile(latest.Path)
	if err != nil {
		return NoBackup, latest, err
	}
	info, err := os.Stat(target)
	if err != nil {
		return NoBackup, latest, err
	}
	if err := atomicfile.Write(target, old, info.Mode().Perm()); err != nil {
		return NoBackup, latest, err
	}
	if err := os.Remove(latest.Path); err != nil {
		return Restored, latest, fmt.Errorf("restored %s, but its backup stays: %w", path, err)
	}
	return Restored, latest, atomicfile.SyncDir(filepath.Dir(target))
}
