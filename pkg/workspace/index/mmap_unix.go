//go:build unix

package index

import (
	"syscall"

	"github.com/hearth-mcp/hearth/pkg/safefile"
)

func init() { mapFile = mmapFile }

// mmapFile maps the file read-only: the index's pages stay in the page
// cache, shared and reclaimable, instead of the daemon's heap.
func mmapFile(path string) ([]byte, func() error, error) {
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
	if fi.Size() == 0 {
		return nil, func() error { return nil }, nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return readWhole(path)
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
