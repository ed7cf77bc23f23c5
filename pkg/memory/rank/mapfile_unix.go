//go:build unix

package rank

import (
	"syscall"

	"github.com/hearth-mcp/hearth/pkg/safefile"
)

func init() { mapFile = mmapFile }

// mmapFile, the system's mapFile, maps the file at path privately (copy on write: the index may
// change its bytes in place, never the file's), so loading a snapshot costs
// no copy and no zeroed allocation, only the pages the kernel already
// caches. release unmaps it, for bytes nothing uses.
//
// A mapping an index uses is never unmapped: its arrays may be read by a
// search as long as any code holds them, and the index lives as long as
// its store, which is as long as the daemon. (The file it came from may be
// replaced meanwhile: the mapping keeps the old one readable.)
func mmapFile(path string) (b []byte, release func(), err error) {
	// A file of hearth's own, in the data directory (safefile.OpenOwn: no
	// link followed, no FIFO waited on, another user's refused).
	f, err := safefile.OpenOwn(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if fi.Size() == 0 || fi.Size() > 1<<40 {
		return nil, func() {}, nil // not a snapshot: the decoder says so
	}
	b, err = syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ|syscall.PROT_WRITE, mapFlags)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { syscall.Munmap(b) }, nil
}
