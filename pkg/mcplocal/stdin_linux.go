package mcplocal

import (
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/rawio"
)

// stdioInput is what a stdio daemon reads its client's frames from: its
// stdin, when that is a pipe or a socket, with raw reads waiting in the
// runtime's poller (decision 0041); a terminal or a file as it is.
func stdioInput(in io.ReadCloser) io.ReadCloser {
	f, ok := in.(*os.File)
	if !ok {
		return in
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return in
	}
	fd, isPipe := -1, false
	rc.Control(func(d uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(d), &st) == nil {
			kind := st.Mode & unix.S_IFMT
			fd, isPipe = int(d), kind == unix.S_IFIFO || kind == unix.S_IFSOCK
		}
	})
	if !isPipe {
		return in
	}
	r, err := rawio.DupReader(fd, f.Name())
	if err != nil {
		return in
	}
	return readCloser{r, func() error { r.Close(); return in.Close() }}
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }
