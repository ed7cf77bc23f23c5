// Package index is the workspace family's code-search index: a trigram
// index in one file per repository, built by a supervised worker and searched
// by the daemon (decisions/0008 says why it is not SQLite FTS5).
//
// # File layout
//
// All integers are little-endian. The file is written to a temporary name,
// synced and renamed over the previous index, so a reader sees either the old
// index or the new one, never a mix, and a cancelled build leaves the old one.
//
//	header   "HEARTHIX" | version u32 | 0 u32                      (16 bytes)
//	content  every indexed file's bytes, back to back
//	paths    every file's repository-relative slash path, back to back
//	files    per file: pathOff u32 | pathLen u32 | contentOff u64 |
//	         size u64 | mtime i64 (Unix ns)                       (32 bytes each)
//	trigrams per trigram, sorted: trigram u32 | postOff u32 | count u32
//	postings per trigram: file numbers as uvarint deltas (first from -1)
//	meta     JSON: repository, build time, HEAD, counts
//	footer   8 section offsets and lengths as u64 | "HEARTHIX"     (136 bytes)
//
// Files are numbered in path order, so postings are sorted and search
// results come out in path order. Trigrams are taken over the content with
// ASCII letters folded to lower case; other bytes (UTF-8 included) are kept,
// which is why a case-insensitive query uses only its all-ASCII trigrams.
package index

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

const (
	magic   = "HEARTHIX"
	version = 1

	headerSize  = 16
	fileRecSize = 32
	triRecSize  = 12
	footerSize  = 16*8 + 8
)

// Meta describes a built index.
type Meta struct {
	Repo    string    `json:"repo"`     // the repository root it indexes
	BuiltAt time.Time `json:"built_at"` // when the build finished
	Head    string    `json:"head"`     // git HEAD at build, "" outside git
	Files   int       `json:"files"`    // files indexed
	Bytes   int64     `json:"bytes"`    // bytes of content indexed
	Skipped int       `json:"skipped"`  // listed files left out (binary, too large, unreadable)
	Reused  int       `json:"reused"`   // files taken unchanged from the previous index
	Source  string    `json:"source"`   // "git" (git ls-files) or "walk"
}

// section indexes the footer's offset/length pairs.
const (
	secContent = iota
	secPaths
	secFiles
	secTrigrams
	secPostings
	secMeta
	secCount
)

type footer [secCount][2]uint64

func (f *footer) encode() []byte {
	b := make([]byte, footerSize)
	for i := 0; i < 8; i++ {
		if i < secCount {
			binary.LittleEndian.PutUint64(b[i*16:], f[i][0])
			binary.LittleEndian.PutUint64(b[i*16+8:], f[i][1])
		}
	}
	copy(b[footerSize-8:], magic)
	return b
}

// ErrCorrupt is wrapped by every failure to read an index file.
var ErrCorrupt = errors.New("index file is corrupt")

func decodeFooter(data []byte) (footer, error) {
	var f footer
	if len(data) < headerSize+footerSize || string(data[:8]) != magic {
		return f, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v != version {
		return f, fmt.Errorf("%w: format version %d, this hearthd reads %d", ErrCorrupt, v, version)
	}
	b := data[len(data)-footerSize:]
	if string(b[footerSize-8:]) != magic {
		return f, fmt.Errorf("%w: bad footer (an interrupted write?)", ErrCorrupt)
	}
	limit := uint64(len(data) - footerSize)
	for i := 0; i < secCount; i++ {
		off, n := binary.LittleEndian.Uint64(b[i*16:]), binary.LittleEndian.Uint64(b[i*16+8:])
		if off < headerSize || off > limit || n > limit-off {
			return f, fmt.Errorf("%w: section %d out of bounds", ErrCorrupt, i)
		}
		f[i] = [2]uint64{off, n}
	}
	return f, nil
}

func encodeMeta(m Meta) []byte {
	b, _ := json.Marshal(m)
	return b
}
