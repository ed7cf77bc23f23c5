//go:build windows

package localsock

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"golang.org/x/sys/windows"
)

// busyWait bounds how long Dial waits for a free instance of the pipe.
const busyWait = 2 * time.Second

// openPipe connects to the pipe name, overlapped as the server's end is. The
// server may only identify the client, never act as it
// (SECURITY_IDENTIFICATION).
func openPipe(name string) (windows.Handle, error) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return 0, err
	}
	return windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_OVERLAPPED|windows.SECURITY_SQOS_PRESENT|windows.SECURITY_IDENTIFICATION, 0)
}

// Dial connects to the daemon's pipe for the socket path (PipeName) and
// reads who serves it (GetNamedPipeServerProcessId, then that process's
// token): a server of another user is ErrNotOurs, refused before a byte is
// sent (docs/decisions/0064-windows-named-pipe.md).
func Dial(path string) (*Conn, error) {
	me, err := Me()
	if err != nil {
		return nil, err
	}
	name := PipeName(me, path)
	deadline := time.Now().Add(busyWait)
	var h windows.Handle
	for {
		h, err = openPipe(name)
		if !errors.Is(err, windows.ERROR_PIPE_BUSY) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return nil, fmt.Errorf("dial %s (the pipe for %s): %w", name, path, err)
	}
	p, err := serverPeer(h)
	if err != nil {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("%w: who serves %s cannot be read (%v); refusing to connect", ErrNotOurs, name, err)
	}
	if err := Ours(p, fmt.Sprintf("the process serving %s (pid %d)", name, p.PID)); err != nil {
		windows.CloseHandle(h)
		return nil, err
	}
	return newConn(h, name, p), nil
}

// Absent reports whether a Dial error means "nobody is serving there", the
// case in which starting a daemon is right: no pipe of that name.
func Absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, windows.ERROR_PIPE_NOT_CONNECTED)
}
