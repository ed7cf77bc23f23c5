//go:build unix

package daemon

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/safefile"
)

// RemoveLeftovers removes what a dead daemon (pid) left where it served:
// its socket file, that socket's lock file when the name was its own
// (hearthd-stdio-<pid>.sock), and its readiness file. A daemon killed with
// SIGKILL removes none of them; the data directory's owner record names
// them, and its next owner calls this. Nothing is removed that is in use:
// a socket's lock must be free and nothing may answer on the socket, and a
// readiness file must name the dead pid. It returns what it removed.
func RemoveLeftovers(pid int, socket, ready string) []string {
	var removed []string
	if socket != "" && socketUnused(socket) {
		if fi, err := os.Lstat(socket); err == nil && fi.Mode().Type() == fs.ModeSocket && os.Remove(socket) == nil {
			removed = append(removed, socket)
		}
		if strings.HasPrefix(filepath.Base(socket), "hearthd-stdio-") && os.Remove(socket+".lock") == nil {
			removed = append(removed, socket+".lock")
		}
	}
	if ready == "" && socket != "" {
		ready = filepath.Join(filepath.Dir(socket), endpoint.ReadyName(socket))
	}
	if ready != "" && readyPID(ready) == pid && os.Remove(ready) == nil {
		removed = append(removed, ready)
	}
	return removed
}

// socketUnused: nobody holds the socket's lock and nothing answers on it.
func socketUnused(socket string) bool {
	if f, err := os.OpenFile(socket+".lock", os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0); err == nil {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		f.Close() // closing lets go of a lock taken just now
		if err != nil {
			return false
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	c, err := net.DialTimeout("unix", socket, time.Second)
	if err == nil {
		c.Close()
		return false
	}
	return true
}

// readyPID is the pid a readiness file names ("<pid> <time>"), or 0. The
// file is hearth's own (safefile.ReadOwn: a FIFO, a link or another user's
// file there names no pid, and is never waited on).
func readyPID(path string) int {
	b, err := safefile.ReadOwn(path, 4096)
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	pid, _ := strconv.Atoi(f[0])
	return pid
}
