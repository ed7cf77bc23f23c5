package shim

import (
	"bytes"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/owner"
)

// ownerWatch is an inotify watch of the data directory for its owner
// record: created, renamed into place (pkg/atomicfile), or removed.
type ownerWatch struct{ fd int }

// open sets up the watch; false when it cannot (no inotify, no
// directory yet: the first start ever creates it).
func (o *ownerWatch) open(home string) bool {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		o.fd = -1
		return false
	}
	if _, err := unix.InotifyAddWatch(fd, home, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_DELETE|unix.IN_CLOSE_WRITE|unix.IN_ONLYDIR); err != nil {
		unix.Close(fd)
		o.fd = -1
		return false
	}
	o.fd = fd
	return true
}

// wait blocks until the owner record changes or d passes; false when
// there is no watch.
func (o *ownerWatch) wait(d time.Duration) bool {
	if o.fd <= 0 {
		return false
	}
	deadline := time.Now().Add(d)
	var buf [4096]byte
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return true
		}
		p := []unix.PollFd{{Fd: int32(o.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(p, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		if n == 0 {
			return true
		}
		n, err = unix.Read(o.fd, buf[:])
		if err != nil || n <= 0 {
			continue
		}
		if recordEvent(buf[:n]) {
			return true
		}
	}
}

// recordEvent reports whether a batch of inotify events names the owner
// record (other files of the directory change while a daemon starts).
func recordEvent(b []byte) bool {
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(b) {
			return false
		}
		name := b[unix.SizeofInotifyEvent:end]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if string(name) == owner.RecordName || ev.Mask&unix.IN_Q_OVERFLOW != 0 {
			return true
		}
		b = b[end:]
	}
	return false
}

func (o *ownerWatch) close() {
	if o.fd > 0 {
		unix.Close(o.fd)
		o.fd = -1
	}
}
