package sweep

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// scan reads every process in /proc: its table entry, its user, and for
// this user's processes the command line and environment; then every
// readable process's descriptors (/proc/PID/fd), to know who holds which
// end of each pipe and socket. A pipe's write end is a descriptor opened
// for writing (/proc/PID/fdinfo/N's flags); a Unix socket's peer is what
// the kernel's socket diagnostics (NETLINK_SOCK_DIAG) name, and a socket
// it says is shut down for reading will never be written again.
func scan() ([]Process, error) {
	table, err := proctable.List()
	if err != nil {
		return nil, err
	}
	uid := os.Getuid()
	procs := make([]Process, 0, len(table))
	pipes := map[uint64][]holder{}   // pipe inode -> descriptors on it
	sockets := map[uint64][]holder{} // socket inode -> descriptors on it
	for _, t := range table {
		p := Process{Proc: t, UID: -1, Started: proctable.Started(t)}
		if u, err := proctable.UID(t.Pid); err == nil {
			p.UID = u
			p.Mine = u == uid
		}
		if p.Mine {
			p.Args, _ = proctable.Args(t.Pid)
			p.Env, _ = proctable.Env(t.Pid)
		}
		dir := "/proc/" + strconv.Itoa(t.Pid) + "/fd/"
		if names, err := readDirNames(dir); err == nil {
			for _, n := range names {
				fd, err := strconv.Atoi(n)
				if err != nil {
					continue
				}
				link, err := os.Readlink(dir + n)
				if err != nil {
					continue
				}
				kind, ino := linkStream(link)
				h := holder{pid: t.Pid, fd: fd}
				switch kind {
				case "pipe":
					pipes[ino] = append(pipes[ino], h)
				case "socket":
					sockets[ino] = append(sockets[ino], h)
				}
				switch fd {
				case 0:
					p.Stdin = Stream{Kind: kind, ID: ino}
				case 1:
					p.Stdout = Stream{Kind: kind, ID: ino}
				}
			}
		}
		procs = append(procs, p)
	}
	diag, diagErr := unixSockets()
	writers := map[uint64][]int{} // pipe inode -> processes holding its write end, for the stdins asked about
	for i := range procs {
		s := &procs[i].Stdin
		if !procs[i].Mine {
			continue
		}
		switch s.Kind {
		case "pipe":
			w, ok := writers[s.ID]
			if !ok {
				for _, h := range pipes[s.ID] {
					if writable(h) {
						w = append(w, h.pid)
					}
				}
				writers[s.ID] = w
			}
			s.Writers, s.WritersKnown = w, true
		case "socket":
			info, ok := diag[s.ID]
			if diagErr != nil || !ok {
				continue // not a Unix socket, or no diagnostics: unknown
			}
			s.Closed = info.shutdown&rcvShutdown != 0 // its peer closed, or shut down its writing
			for _, h := range sockets[uint64(info.peer)] {
				s.Writers = append(s.Writers, h.pid)
			}
			s.WritersKnown = true
			if info.peer == 0 {
				s.Closed = true // the peer was released: nothing can write to it
			}
		}
	}
	return procs, nil
}

// holder is one descriptor of one process.
type holder struct{ pid, fd int }

// writable: the descriptor is open for writing (O_WRONLY or O_RDWR in
// /proc/PID/fdinfo/FD's flags, written in octal).
func writable(h holder) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(h.pid) + "/fdinfo/" + strconv.Itoa(h.fd))
	if err != nil {
		return false // gone since: it holds nothing now
	}
	return fdinfoWritable(string(b))
}

func fdinfoWritable(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&syscall.O_ACCMODE != syscall.O_RDONLY
		}
	}
	return false
}

// linkStream reads a /proc/PID/fd link: "pipe:[123]", "socket:[456]".
func linkStream(link string) (string, uint64) {
	for _, kind := range []string{"pipe", "socket"} {
		if v, ok := strings.CutPrefix(link, kind+":["); ok {
			if ino, err := strconv.ParseUint(strings.TrimSuffix(v, "]"), 10, 64); err == nil {
				return kind, ino
			}
		}
	}
	return "", 0
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// signal sends SIGTERM (or SIGKILL, kill) to the process pid that started
// at start: through a pidfd opened before its start time is checked, so
// that a pid freed and given to another process in between is never
// signalled (kill(2) after the check where pidfds are missing).
func signal(pid int, start uint64, kill bool) {
	sig := unix.SIGTERM
	if kill {
		sig = unix.SIGKILL
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err == nil {
		defer unix.Close(pidfd)
	}
	if !sameProcess(pid, start) {
		return
	}
	if err == nil {
		_ = unix.PidfdSendSignal(pidfd, sig, nil, 0)
		return
	}
	_ = unix.Kill(pid, sig)
}

// sameProcess: pid is still the process that started at start.
func sameProcess(pid int, start uint64) bool {
	p, err := proctable.Stat(pid)
	return err == nil && p.Start == start && !p.Zombie
}

// self is the sweep's own process.
func self() me { return me{pid: os.Getpid()} }
