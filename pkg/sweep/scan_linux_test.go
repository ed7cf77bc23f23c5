package sweep

import (
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// find is the scan's view of pid.
func find(t *testing.T, pid int) Process {
	t.Helper()
	procs, err := scan()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if p.Pid == pid {
			return p
		}
	}
	t.Fatalf("pid %d not in the scan", pid)
	return Process{}
}

// A child's stdin pipe: written by this process while it holds the write
// end, by nobody once it closed it.
func TestScanPipeWriters(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command("/bin/sleep", "30")
	c.Stdin = r
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	r.Close()
	p := find(t, c.Process.Pid)
	if p.Stdin.Kind != "pipe" || !p.Stdin.WritersKnown || !slices.Equal(p.Stdin.Writers, []int{os.Getpid()}) || !p.Mine || p.UID != os.Getuid() {
		t.Fatalf("with the write end held here: %+v", p.Stdin)
	}
	w.Close()
	if p = find(t, c.Process.Pid); !p.Stdin.WritersKnown || len(p.Stdin.Writers) != 0 || !dead(p.Stdin, nil) {
		t.Fatalf("with the write end closed: %+v", p.Stdin)
	}
}

// A child's stdin one end of a socket pair (as Node's clients hand their
// servers): its peer is held here, then released.
func TestScanSocketPeer(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	child, mine := os.NewFile(uintptr(fds[0]), "child"), os.NewFile(uintptr(fds[1]), "mine")
	c := exec.Command("/bin/sleep", "30")
	c.Stdin = child
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	child.Close()
	p := find(t, c.Process.Pid)
	if p.Stdin.Kind != "socket" || !p.Stdin.WritersKnown || p.Stdin.Closed || !slices.Equal(p.Stdin.Writers, []int{os.Getpid()}) {
		t.Fatalf("with its peer held here: %+v", p.Stdin)
	}
	mine.Close()
	if p = find(t, c.Process.Pid); !p.Stdin.Closed || !dead(p.Stdin, nil) {
		t.Fatalf("with its peer released: %+v", p.Stdin)
	}
}

// A tree left behind for real: a shell that ignores SIGTERM, reparented to
// init once the shell that started it exited, in a session of its own, its
// stdin a pipe this test then closes. It is found (and nothing else in its
// session), then ended whole: SIGTERM, and SIGKILL after the grace.
func TestFindAndKillALeftTree(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pidR, pidW, _ := os.Pipe()
	// A shell gives an asynchronous command /dev/null for stdin unless it
	// is redirected: the pipe is passed on by hand.
	c := exec.Command("/bin/sh", "-c", `exec 4<&0; sh -c 'trap "" TERM; while :; do sleep 0.1; done' <&4 4<&- & echo $! >&3; exit`)
	c.Stdin = r
	c.ExtraFiles = []*os.File{pidW}
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	pidW.Close()
	var left int
	if _, err := fmtScan(pidR, &left); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(left, syscall.SIGKILL) })
	sid := c.Process.Pid
	scope := Options{Sessions: []int{sid}}
	if got, err := Find(scope); err != nil || len(got) != 0 {
		t.Fatalf("listed while this test holds its stdin: %+v %v", got, err)
	}
	w.Close()
	var got []Orphan
	for range 100 { // until its shell's parent is init
		if got, err = Find(scope); err != nil {
			t.Fatal(err)
		}
		if len(got) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(got) != 1 || got[0].Pid != left || got[0].Name != "sh" || got[0].Procs[0].Pid != left {
		t.Fatalf("found %+v, want the tree of %d", got, left)
	}
	start := time.Now()
	out, err := Kill(context.Background(), got, scope, 300*time.Millisecond)
	if err != nil || len(out) != 1 || out[0].Left != 0 || out[0].Ended < 1 || out[0].Killed < 1 {
		t.Fatalf("kill: %+v %v", out, err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("SIGKILL came %v after SIGTERM, before the grace", d)
	}
	if p, err := proctable.Stat(left); err == nil && !p.Zombie {
		t.Fatalf("%d still runs: %+v", left, p)
	}
	if got, _ := Find(scope); len(got) != 0 {
		t.Fatalf("listed after the kill: %+v", got)
	}
	// Asked again, a tree no longer there is skipped, not signalled.
	if out, err := Kill(context.Background(), got[:0:0], scope, 0); err != nil || len(out) != 0 {
		t.Fatalf("%+v %v", out, err)
	}
	stale := []Orphan{{Pid: left, Start: 1}}
	if out, _ := Kill(context.Background(), stale, scope, 0); out[0].Skipped == "" {
		t.Fatalf("a tree not found again was not skipped: %+v", out)
	}
}

func fmtScan(f *os.File, v *int) (int, error) {
	b := make([]byte, 32)
	n, err := f.Read(b)
	if err != nil {
		return 0, err
	}
	x := 0
	for _, c := range b[:n] {
		if c >= '0' && c <= '9' {
			x = x*10 + int(c-'0')
		}
	}
	*v = x
	return n, nil
}

// The unix_diag answer: a record with its peer and shutdown state, the
// dump's end, an error, and every way of being cut short.
func TestParseUnixDiag(t *testing.T) {
	ne := binary.NativeEndian
	msg := func(typ uint16, body []byte) []byte {
		b := make([]byte, 16, 16+len(body))
		ne.PutUint32(b, uint32(16+len(body)))
		ne.PutUint16(b[4:], typ)
		return append(b, body...)
	}
	attr := func(typ uint16, v []byte) []byte {
		b := make([]byte, 4)
		ne.PutUint16(b, uint16(4+len(v)))
		ne.PutUint16(b[2:], typ)
		b = append(b, v...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	rec := make([]byte, 16)
	ne.PutUint32(rec[4:], 555)
	peer := make([]byte, 4)
	ne.PutUint32(peer, 556)
	rec = append(rec, attr(unixDiagPeer, peer)...)
	rec = append(rec, attr(unixDiagShutdown, []byte{1})...)
	good := append(msg(sockDiagByFamily, rec), msg(3, make([]byte, 4))...)
	out := map[uint64]sockInfo{}
	done, err := parseUnixDiag(good, out)
	if err != nil || !done || out[555] != (sockInfo{peer: 556, shutdown: 1}) {
		t.Fatalf("%v %v %+v", done, err, out)
	}
	errMsg := make([]byte, 4)
	ne.PutUint32(errMsg, uint32(0x100000000-int64(unix.EPERM)))
	if _, err := parseUnixDiag(msg(2, errMsg), map[uint64]sockInfo{}); err == nil {
		t.Fatal("an NLMSG_ERROR read as no error")
	}
	for n := 1; n < len(good)-20; n++ {
		cut := append([]byte(nil), good[:n]...)
		if n >= 4 && n < 16+len(rec) {
			ne.PutUint32(cut, uint32(16+len(rec))) // the length now lies
		}
		if _, err := parseUnixDiag(cut, map[uint64]sockInfo{}); err == nil && n >= 16 && n < 16+len(rec) {
			t.Errorf("cut at %d: no error", n)
		}
	}
	bad := msg(sockDiagByFamily, append(append([]byte(nil), rec[:16]...), 0xff, 0xff, 0, 0))
	if _, err := parseUnixDiag(bad, map[uint64]sockInfo{}); err == nil {
		t.Fatal("an attribute longer than its message read")
	}
}

func FuzzParseUnixDiag(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseUnixDiag(b, map[uint64]sockInfo{})
	})
}

// /proc/PID/fdinfo flags, and fd links.
func TestProcFDText(t *testing.T) {
	for s, want := range map[string]bool{
		"pos:\t0\nflags:\t01\nmnt_id:\t15\n":      true,
		"pos:\t0\nflags:\t02004002\nmnt_id:\t1\n": true,
		"pos:\t0\nflags:\t0100000\n":              false,
		"flags:\tnot-octal\n":                     false,
		"":                                        false,
	} {
		if got := fdinfoWritable(s); got != want {
			t.Errorf("%q: %v", s, got)
		}
	}
	for link, want := range map[string]string{"pipe:[12]": "pipe12", "socket:[34]": "socket34", "/dev/null": "0", "pipe:[x]": "0", "anon_inode:[eventfd]": "0"} {
		kind, ino := linkStream(link)
		if got := kind + func() string {
			if ino == 0 {
				return "0"
			}
			return string(rune('0'+ino/10)) + string(rune('0'+ino%10))
		}(); got != want {
			t.Errorf("%q: %s", link, got)
		}
	}
}
