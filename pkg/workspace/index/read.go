package index

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/hearth-mcp/hearth/pkg/safefile"
)

// Index is an open index file. It is safe for concurrent use until Close.
type Index struct {
	data  []byte
	close func() error
	foot  footer
	meta  Meta
	n     int // files
	ntri  int
}

// Open maps the index at path and checks its structure.
func Open(path string) (*Index, error) {
	data, closer, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	ix, err := parse(data)
	if err != nil {
		closer()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ix.close = closer
	return ix, nil
}

func parse(data []byte) (*Index, error) {
	foot, err := decodeFooter(data)
	if err != nil {
		return nil, err
	}
	ix := &Index{data: data, foot: foot}
	if foot[secFiles][1]%fileRecSize != 0 || foot[secTrigrams][1]%triRecSize != 0 {
		return nil, fmt.Errorf("%w: table sizes", ErrCorrupt)
	}
	ix.n = int(foot[secFiles][1] / fileRecSize)
	ix.ntri = int(foot[secTrigrams][1] / triRecSize)
	if err := json.Unmarshal(ix.section(secMeta), &ix.meta); err != nil {
		return nil, fmt.Errorf("%w: meta: %v", ErrCorrupt, err)
	}
	// Check every file record once, so later reads need no bounds checks
	// beyond Go's own.
	content, paths := foot[secContent][1], foot[secPaths][1]
	for i := 0; i < ix.n; i++ {
		r := ix.rec(i)
		po, pl := uint64(binary.LittleEndian.Uint32(r[0:])), uint64(binary.LittleEndian.Uint32(r[4:]))
		co, cl := binary.LittleEndian.Uint64(r[8:]), binary.LittleEndian.Uint64(r[16:])
		if po+pl > paths || co > content || cl > content-co {
			return nil, fmt.Errorf("%w: file record %d out of bounds", ErrCorrupt, i)
		}
	}
	posts := foot[secPostings][1]
	for i := 0; i < ix.ntri; i++ {
		if uint64(binary.LittleEndian.Uint32(ix.tri(i)[4:])) > posts {
			return nil, fmt.Errorf("%w: trigram record %d out of bounds", ErrCorrupt, i)
		}
	}
	return ix, nil
}

// Close releases the mapping. No method may be called after it.
func (ix *Index) Close() error {
	if ix.close == nil {
		return nil
	}
	err := ix.close()
	ix.close, ix.data = nil, nil
	return err
}

// Meta returns what the build recorded.
func (ix *Index) Meta() Meta { return ix.meta }

// Len is the number of indexed files.
func (ix *Index) Len() int { return ix.n }

// Size is the index file's size in bytes.
func (ix *Index) Size() int64 { return int64(len(ix.data)) }

func (ix *Index) section(s int) []byte {
	return ix.data[ix.foot[s][0] : ix.foot[s][0]+ix.foot[s][1]]
}

func (ix *Index) rec(i int) []byte {
	off := ix.foot[secFiles][0] + uint64(i)*fileRecSize
	return ix.data[off : off+fileRecSize]
}

func (ix *Index) tri(i int) []byte {
	off := ix.foot[secTrigrams][0] + uint64(i)*triRecSize
	return ix.data[off : off+triRecSize]
}

// FileInfo is one indexed file.
type FileInfo struct {
	Path    string // repository-relative slash path
	Size    int64
	MTime   int64 // Unix nanoseconds when it was read
	content []byte
}

// File returns the i-th file (0 ≤ i < Len) in path order.
func (ix *Index) File(i int) FileInfo { return ix.file(i) }

func (ix *Index) file(i int) FileInfo {
	r := ix.rec(i)
	po, pl := binary.LittleEndian.Uint32(r[0:]), binary.LittleEndian.Uint32(r[4:])
	co, cl := binary.LittleEndian.Uint64(r[8:]), binary.LittleEndian.Uint64(r[16:])
	paths, content := ix.section(secPaths), ix.section(secContent)
	return FileInfo{
		Path:    string(paths[po : po+pl]),
		Size:    int64(cl),
		MTime:   int64(binary.LittleEndian.Uint64(r[24:])),
		content: content[co : co+cl],
	}
}

func (ix *Index) path(i int) string {
	r := ix.rec(i)
	po, pl := binary.LittleEndian.Uint32(r[0:]), binary.LittleEndian.Uint32(r[4:])
	return string(ix.section(secPaths)[po : po+pl])
}

func (ix *Index) lookup(rel string) (int, bool) {
	i := sort.Search(ix.n, func(i int) bool { return ix.path(i) >= rel })
	return i, i < ix.n && ix.path(i) == rel
}

// postings returns the sorted files holding trigram t.
func (ix *Index) postings(t uint32) []int32 {
	i := sort.Search(ix.ntri, func(i int) bool { return binary.LittleEndian.Uint32(ix.tri(i)) >= t })
	if i == ix.ntri || binary.LittleEndian.Uint32(ix.tri(i)) != t {
		return nil
	}
	r := ix.tri(i)
	p := ix.section(secPostings)[binary.LittleEndian.Uint32(r[4:]):]
	count := binary.LittleEndian.Uint32(r[8:])
	out := make([]int32, 0, min(int(count), ix.n))
	last := int64(-1)
	for k := uint32(0); k < count; k++ {
		d, m := binary.Uvarint(p)
		if m <= 0 {
			break // corrupt tail: what was decoded is still sorted and in range-checked below
		}
		p = p[m:]
		last += int64(d)
		if last >= int64(ix.n) {
			break
		}
		out = append(out, int32(last))
	}
	return out
}

// readWhole reads the file into memory where mmap is unavailable, by the
// rule for hearth's own files (safefile.ReadOwn).
func readWhole(path string) ([]byte, func() error, error) {
	b, err := safefile.ReadOwn(path, maxIndexFile)
	return b, func() error { return nil }, err
}

// maxIndexFile bounds an index read whole: far above any index's size (a
// million files' trigrams), so only something that is no index is refused.
const maxIndexFile = 1 << 34

// mapFile maps the file at path read-only where the system can
// (mmap_unix.go sets it), else reads it whole; the closer releases it.
var mapFile = readWhole
