package rank

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/hearth-mcp/hearth/pkg/atomicfile"
	"github.com/hearth-mcp/hearth/pkg/memory/lexindex"
	"github.com/hearth-mcp/hearth/pkg/safefile"
)

// A snapshot is the lexical index saved to a file so that the next start
// need not rebuild it from the store (docs/decisions/0010, 0019). It is a
// cache, never trusted: it carries the Stamp of the store state it holds
// and a checksum, and the engine rebuilds whenever the file is missing,
// damaged, of another store, or ahead of the store.
//
// Layout: a header of headerSize bytes (magic, layout version, stamp), the
// index's encoding (lexindex.Encode), then a trailer (the encoding's length
// and CRC-32C, and the magic again).

// Stamp says which store state a snapshot holds.
type Stamp struct {
	// Store identifies the store (an id it keeps), so a snapshot of one
	// store is never used for another.
	Store string
	// Seq is the store's change sequence the index reflects: every change
	// up to Seq and none after it.
	Seq int64
	// Memory is the memory key of change Seq (0 when Seq is 0): a store
	// whose change Seq touched another memory is not the one snapshotted
	// (a restored backup that has since diverged, say).
	Memory int64
}

const (
	magic       = "HEARTHIX"
	layout      = 1
	headerSize  = 256
	trailerSize = 24
	maxStoreID  = 128
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrNoSnapshot: there is no snapshot file.
var ErrNoSnapshot = errors.New("no index snapshot")

// SaveSnapshot writes ix with its stamp to path, replacing any snapshot there
// at once (temporary file, sync, rename, directory sync): a reader sees the
// old snapshot or the new one whole.
func SaveSnapshot(path string, ix *lexindex.Index, st Stamp) (err error) {
	if !lexindex.Encodable {
		return errors.New("index snapshots need a little-endian machine")
	}
	if len(st.Store) > maxStoreID {
		return fmt.Errorf("store id over %d bytes", maxStoreID)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("save index snapshot: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	head := make([]byte, headerSize)
	copy(head, magic)
	binary.LittleEndian.PutUint32(head[8:], layout)
	binary.LittleEndian.PutUint64(head[16:], uint64(st.Seq))
	binary.LittleEndian.PutUint64(head[24:], uint64(st.Memory))
	head[32] = byte(len(st.Store))
	copy(head[33:], st.Store)
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := w.Write(head); err != nil {
		return fmt.Errorf("save index snapshot: %w", err)
	}
	sum := crc32.New(castagnoli)
	n := &counter{}
	if err := ix.Encode(io.MultiWriter(w, sum, n)); err != nil {
		return fmt.Errorf("save index snapshot: %w", err)
	}
	tail := make([]byte, trailerSize)
	binary.LittleEndian.PutUint64(tail, uint64(n.n))
	binary.LittleEndian.PutUint32(tail[8:], sum.Sum32())
	copy(tail[16:], magic)
	if _, err := w.Write(tail); err != nil {
		return fmt.Errorf("save index snapshot: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("save index snapshot: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("save index snapshot: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save index snapshot: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("save index snapshot: %w", err)
	}
	return atomicfile.SyncDir(dir)
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// LoadSnapshot maps the snapshot at path: ErrNoSnapshot when there is
// none, another error when it is damaged or unreadable. The caller checks
// the stamp against its store before using the index. The index uses the
// mapped bytes in place (copy on write: the file never changes).
func LoadSnapshot(path string) (*lexindex.Index, Stamp, error) {
	b, release, err := mapFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, Stamp{}, ErrNoSnapshot
	}
	if err != nil {
		return nil, Stamp{}, fmt.Errorf("read index snapshot: %w", err)
	}
	ix, st, err := decodeSnapshot(b)
	if err != nil {
		release() // nothing uses the bytes
		return nil, st, err
	}
	return ix, st, nil
}

func decodeSnapshot(b []byte) (*lexindex.Index, Stamp, error) {
	var st Stamp
	if len(b) < headerSize+trailerSize || string(b[:8]) != magic || string(b[len(b)-8:]) != magic {
		return nil, st, errors.New("index snapshot: not a snapshot file")
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != layout {
		return nil, st, fmt.Errorf("index snapshot: layout %d, this build reads %d", v, layout)
	}
	st.Seq = int64(binary.LittleEndian.Uint64(b[16:]))
	st.Memory = int64(binary.LittleEndian.Uint64(b[24:]))
	idLen := int(b[32])
	if idLen > maxStoreID {
		return nil, st, errors.New("index snapshot: bad header")
	}
	st.Store = string(b[33 : 33+idLen])
	tail := b[len(b)-trailerSize:]
	body := b[headerSize : len(b)-trailerSize]
	if binary.LittleEndian.Uint64(tail) != uint64(len(body)) {
		return nil, st, errors.New("index snapshot: truncated")
	}
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(tail[8:]) {
		return nil, st, errors.New("index snapshot: checksum mismatch")
	}
	ix, err := lexindex.Decode(body)
	if err != nil {
		return nil, st, fmt.Errorf("index snapshot: %w", err)
	}
	return ix, st, nil
}

// RemoveTemporaries deletes the temporary files a killed save of the
// snapshot at path left beside it.
func RemoveTemporaries(path string) {
	names, _ := filepath.Glob(path + ".tmp-*")
	for _, n := range names {
		os.Remove(n)
	}
}

// TrustedSnapshot loads the snapshot at path, after removing what a killed
// save left beside it, and returns its index only if it can be trusted for
// the store storeID: whole, of this store, and stamped with a change the
// store's log still has with the same memory (memoryOf returns the memory of
// change seq, found false when the log has no such change). Otherwise ix is
// nil and why says what was wrong, "" when there is no snapshot at all.
// Every engine keeping a change log decides alike.
func TrustedSnapshot(path, storeID string, memoryOf func(seq int64) (mem int64, found bool, err error)) (ix *lexindex.Index, st Stamp, why string) {
	RemoveTemporaries(path)
	ix, st, err := LoadSnapshot(path)
	switch {
	case errors.Is(err, ErrNoSnapshot):
		return nil, st, ""
	case err != nil:
		return nil, st, "unusable: " + err.Error()
	case st.Store != storeID:
		return nil, st, "of another store"
	case st.Seq > 0:
		mem, found, err := memoryOf(st.Seq)
		switch {
		case err != nil:
			return nil, st, "cannot be checked: " + err.Error()
		case !found:
			return nil, st, "ahead of the store"
		case mem != st.Memory:
			return nil, st, "of another history of the store"
		}
	}
	return ix, st, ""
}

// mapFile gives the bytes of the snapshot file at path: mapped where the
// system can (mapfile_unix.go sets it), else read whole; release lets
// them go.
var mapFile = func(path string) ([]byte, func(), error) {
	b, err := safefile.ReadOwn(path, 1<<40)
	return b, func() {}, err
}
