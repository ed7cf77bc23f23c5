//go:build unix

package daemon

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/hosted"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
)

// SendHanded writes each handed instance to conn: a 4-byte length and its
// record as JSON, sent with its four descriptors (SCM_RIGHTS), then a zero
// length, sent with the owner lock's file when there is one: the
// successor holds the lock from then on, without a gap. The descriptors are closed here, sent or not (a keeper whose
// every daemon end is closed ends its tree). It returns how many were sent.
func SendHanded(conn *os.File, list []hosted.Handed, lock *os.File) (int, error) {
	defer func() {
		for _, h := range list {
			h.Files.Close()
		}
	}()
	fd := int(conn.Fd())
	sent := 0
	for _, h := range list {
		body, err := json.Marshal(h.Record)
		if err != nil {
			return sent, err
		}
		msg := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		msg = append(msg, body...)
		f := h.Files
		rights := unix.UnixRights(int(f.Stdin.Fd()), int(f.Stdout.Fd()), int(f.Stderr.Fd()), int(f.Death.Fd()))
		if err := unix.Sendmsg(fd, msg[:4], rights, nil, 0); err != nil {
			return sent, err
		}
		if _, err := conn.Write(msg[4:]); err != nil {
			return sent, err
		}
		sent++
	}
	var rights []byte
	if lock != nil {
		rights = unix.UnixRights(int(lock.Fd()))
	}
	return sent, unix.Sendmsg(fd, []byte{0, 0, 0, 0}, rights, nil, 0)
}

// maxHandedRecord bounds one record (a cached initialize result is small).
const maxHandedRecord = 16 << 20

// ReceiveHanded reads what SendHanded wrote, until its zero length, and
// returns the instances and the owner lock's file (nil: none came).
func ReceiveHanded(conn *os.File) ([]hosted.Handed, *os.File, error) {
	fd := int(conn.Fd())
	var out []hosted.Handed
	fail := func(err error) ([]hosted.Handed, *os.File, error) {
		for _, h := range out {
			h.Files.Close()
		}
		return nil, nil, err
	}
	for {
		head := make([]byte, 4)
		oob := make([]byte, unix.CmsgSpace(4*4))
		n, oobn, _, _, err := unix.Recvmsg(fd, head, oob, 0)
		if err != nil {
			return fail(err)
		}
		if n == 0 {
			return fail(io.ErrUnexpectedEOF)
		}
		if n < 4 {
			if _, err := io.ReadFull(conn, head[n:]); err != nil {
				return fail(err)
			}
		}
		var fds []int
		if oobn > 0 {
			msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
			if err != nil {
				return fail(err)
			}
			for _, m := range msgs {
				got, err := unix.ParseUnixRights(&m)
				if err == nil {
					for _, f := range got {
						// Close-on-exec at once (MSG_CMSG_CLOEXEC is not
						// everywhere): this daemon starts no child yet.
						unix.CloseOnExec(f)
					}
					fds = append(fds, got...)
				}
			}
		}
		size := binary.BigEndian.Uint32(head)
		if size == 0 {
			var lock *os.File
			for i, f := range fds {
				if i == 0 {
					lock = os.NewFile(uintptr(f), "owner-lock")
				} else {
					unix.Close(f)
				}
			}
			return out, lock, nil
		}
		if len(fds) != 4 || size > maxHandedRecord {
			for _, f := range fds {
				unix.Close(f)
			}
			return fail(fmt.Errorf("a handed record of %d bytes came with %d descriptors, want 4", size, len(fds)))
		}
		files := &supervisor.Handed{Stdin: os.NewFile(uintptr(fds[0]), "upstream-stdin"), Stdout: os.NewFile(uintptr(fds[1]), "upstream-stdout"),
			Stderr: os.NewFile(uintptr(fds[2]), "upstream-stderr"), Death: os.NewFile(uintptr(fds[3]), "keeper-death")}
		body := make([]byte, size)
		if _, err := io.ReadFull(conn, body); err != nil {
			files.Close()
			return fail(err)
		}
		var rec hosted.Record
		if err := json.Unmarshal(body, &rec); err != nil {
			files.Close()
			return fail(err)
		}
		files.KeeperPid = rec.KeeperPid
		out = append(out, hosted.Handed{Record: rec, Files: files})
	}
}
