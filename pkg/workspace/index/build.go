package index

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/hearth-mcp/hearth/pkg/atomicfile"
	"github.com/hearth-mcp/hearth/pkg/safefile"
)

// MaxFileSize is the largest file indexed; larger ones are skipped.
const MaxFileSize = 1 << 20

// binarySniff is how much of a file is searched for a NUL byte to call it
// binary (git's heuristic).
const binarySniff = 8000

// Entry is one file a build is asked to index.
type Entry struct {
	Rel string // repository-relative slash path: the sort key, and the file's name in the build's root
}

// Progress is told how many of total files are done; it is called from the
// building goroutine.
type Progress func(done, total int)

// Build writes the index of entries, read inside root, to path. prev, if
// not nil, is the previous index of the same repository: a file whose size
// and modification time are unchanged is taken from it instead of being read
// again. The meta's Files, Bytes and Skipped are filled in; BuiltAt is set
// when it is zero.
//
// Only regular files inside root are read: an entry that is a symbolic
// link, a FIFO, a socket or a device, or whose directory leads out of root
// through a symbolic link, is skipped (see pkg/safefile).
//
// The index is written to a temporary file beside path and renamed over it
// only when complete, so a failed or cancelled build leaves the old index.
func Build(ctx context.Context, path string, meta Meta, root *os.Root, entries []Entry, prev *Index, progress Progress) (Meta, error) {
	entries = slices.Clone(entries)
	slices.SortFunc(entries, func(a, b Entry) int { return cmpString(a.Rel, b.Rel) })
	entries = slices.CompactFunc(entries, func(a, b Entry) bool { return a.Rel == b.Rel })

	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return meta, err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := &countingWriter{w: bufio.NewWriterSize(tmp, 1<<20)}
	hdr := make([]byte, headerSize)
	copy(hdr, magic)
	binary.LittleEndian.PutUint32(hdr[8:], version)
	w.Write(hdr)

	var (
		pb       postingsBuilder
		paths    []byte
		recs     []byte
		foot     footer
		lastTick time.Time
	)
	foot[secContent][0] = w.n
	n := 0
	// Entries are sorted by path: the files of a directory follow each
	// other, and Dirs keeps the directory open for them.
	dirs := safefile.NewDirs(root)
	defer dirs.Close()
	for i, e := range entries {
		if i&63 == 0 {
			if err := ctx.Err(); err != nil {
				return meta, err
			}
		}
		if progress != nil && (i == 0 || time.Since(lastTick) >= 50*time.Millisecond) {
			progress(i, len(entries))
			lastTick = time.Now()
		}
		content, size, mtime, reused, keep := readEntry(dirs, e, prev)
		if !keep {
			meta.Skipped++
			continue
		}
		rec := make([]byte, fileRecSize)
		binary.LittleEndian.PutUint32(rec[0:], uint32(len(paths)))
		binary.LittleEndian.PutUint32(rec[4:], uint32(len(e.Rel)))
		binary.LittleEndian.PutUint64(rec[8:], uint64(w.n-foot[secContent][0]))
		binary.LittleEndian.PutUint64(rec[16:], uint64(size))
		binary.LittleEndian.PutUint64(rec[24:], uint64(mtime))
		recs = append(recs, rec...)
		paths = append(paths, e.Rel...)
		w.Write(content)
		pb.add(int32(n), content)
		meta.Bytes += int64(len(content))
		if reused {
			meta.Reused++
		}
		n++
	}
	meta.Files = n
	foot[secContent][1] = w.n - foot[secContent][0]
	foot[secPaths] = [2]uint64{w.n, uint64(len(paths))}
	w.Write(paths)
	foot[secFiles] = [2]uint64{w.n, uint64(len(recs))}
	w.Write(recs)
	tris, posts := pb.encode()
	foot[secTrigrams] = [2]uint64{w.n, uint64(len(tris))}
	w.Write(tris)
	foot[secPostings] = [2]uint64{w.n, uint64(len(posts))}
	w.Write(posts)
	if meta.BuiltAt.IsZero() {
		meta.BuiltAt = time.Now().UTC()
	}
	mb := encodeMeta(meta)
	foot[secMeta] = [2]uint64{w.n, uint64(len(mb))}
	w.Write(mb)
	w.Write(foot.encode())
	if w.err != nil {
		return meta, w.err
	}
	if err := w.w.(*bufio.Writer).Flush(); err != nil {
		return meta, err
	}
	if progress != nil {
		progress(len(entries), len(entries))
	}
	if err := tmp.Sync(); err != nil {
		return meta, err
	}
	if err := tmp.Close(); err != nil {
		return meta, err
	}
	if err := ctx.Err(); err != nil {
		return meta, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return meta, err
	}
	ok = true
	// Failure (some file systems) only weakens durability, never
	// correctness, so it is ignored.
	atomicfile.SyncDir(filepath.Dir(path))
	return meta, nil
}

// readEntry returns a file's content (from prev when unchanged), or keep
// false for a file that is not indexed: gone, not a regular file, outside
// the root, too large, binary, unreadable.
func readEntry(dirs *safefile.Dirs, e Entry, prev *Index) (content []byte, size, mtime int64, reused, keep bool) {
	fi, err := dirs.Lstat(e.Rel)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxFileSize {
		return nil, 0, 0, false, false
	}
	size, mtime = fi.Size(), fi.ModTime().UnixNano()
	if prev != nil {
		if i, ok := prev.lookup(e.Rel); ok {
			if f := prev.file(i); f.Size == size && f.MTime == mtime {
				return f.content, size, mtime, true, true
			}
		}
	}
	f, err := dirs.OpenNoFollow(e.Rel)
	if err != nil {
		return nil, 0, 0, false, false
	}
	defer f.Close()
	// What was opened may have replaced what was checked: take its size.
	if fi, err = f.Stat(); err != nil || fi.Size() > MaxFileSize {
		return nil, 0, 0, false, false
	}
	size, mtime = fi.Size(), fi.ModTime().UnixNano()
	// Read one byte more than the stat said, to notice a file that grew.
	b := make([]byte, size+1)
	k, err := io.ReadFull(f, b)
	switch err {
	case nil: // it grew since the stat: read the rest, within the limit
		rest, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1-int64(k)))
		if err != nil || k+len(rest) > MaxFileSize {
			return nil, 0, 0, false, false
		}
		b = append(b[:k], rest...)
	case io.ErrUnexpectedEOF, io.EOF:
		b = b[:k]
	default:
		return nil, 0, 0, false, false
	}
	if bytes.IndexByte(b[:min(len(b), binarySniff)], 0) >= 0 {
		return nil, 0, 0, false, false
	}
	return b, int64(len(b)), mtime, false, true
}

// fold maps ASCII upper-case letters to lower case and every other byte to itself.
var fold = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// postingsBuilder gathers, for each trigram, the sorted numbers of the files
// holding it. The trigram-to-list map is a two-level table allocated a page
// per leading byte, so source text (mostly ASCII) touches few pages.
type postingsBuilder struct {
	pages [256]*[1 << 16]int32 // trigram -> list number + 1
	lists []plist
}

type plist struct {
	tri   uint32
	last  int32 // the last file added, -1 before any
	count uint32
	buf   []byte // uvarint deltas
}

func (p *postingsBuilder) add(file int32, content []byte) {
	if len(content) < 3 {
		return
	}
	t := uint32(fold[content[0]])<<8 | uint32(fold[content[1]])
	var tmp [binary.MaxVarintLen64]byte
	for _, c := range content[2:] {
		t = (t<<8 | uint32(fold[c])) & 0xFFFFFF
		page := p.pages[t>>16]
		if page == nil {
			page = new([1 << 16]int32)
			p.pages[t>>16] = page
		}
		slot := &page[t&0xFFFF]
		if *slot == 0 {
			p.lists = append(p.lists, plist{tri: t, last: -1})
			*slot = int32(len(p.lists))
		}
		l := &p.lists[*slot-1]
		if l.last == file {
			continue
		}
		k := binary.PutUvarint(tmp[:], uint64(file-l.last))
		l.buf = append(l.buf, tmp[:k]...)
		l.last = file
		l.count++
	}
}

// encode returns the trigram table and the postings section.
func (p *postingsBuilder) encode() (tris, posts []byte) {
	slices.SortFunc(p.lists, func(a, b plist) int { return int(a.tri) - int(b.tri) })
	tris = make([]byte, 0, len(p.lists)*triRecSize)
	size := 0
	for _, l := range p.lists {
		size += len(l.buf)
	}
	posts = make([]byte, 0, size)
	var rec [triRecSize]byte
	for _, l := range p.lists {
		binary.LittleEndian.PutUint32(rec[0:], l.tri)
		binary.LittleEndian.PutUint32(rec[4:], uint32(len(posts)))
		binary.LittleEndian.PutUint32(rec[8:], l.count)
		tris = append(tris, rec[:]...)
		posts = append(posts, l.buf...)
	}
	return tris, posts
}

type countingWriter struct {
	w   io.Writer
	n   uint64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += uint64(n)
	c.err = err
	return n, err
}

// cmpString orders paths bytewise, as the index stores them.
func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
