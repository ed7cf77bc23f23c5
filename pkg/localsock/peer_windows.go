//go:build windows

package localsock

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// processUser is the SID of the user a process runs as, read from its
// token: how each end of the pipe learns who the other is (the client's
// pid from GetNamedPipeClientProcessId, the server's from
// GetNamedPipeServerProcessId; docs/decisions/0064-windows-named-pipe.md).
func processUser(pid uint32) (string, error) {
	p, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return "", fmt.Errorf("open process %d: %w", pid, err)
	}
	defer windows.CloseHandle(p)
	var tok windows.Token
	if err := windows.OpenProcessToken(p, windows.TOKEN_QUERY, &tok); err != nil {
		return "", fmt.Errorf("the token of process %d: %w", pid, err)
	}
	defer tok.Close()
	u, err := tok.GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("the user of process %d: %w", pid, err)
	}
	return u.User.Sid.String(), nil
}

// clientPeer: who is at the other end of an accepted pipe.
func clientPeer(h windows.Handle) (Peer, error) {
	var pid uint32
	if err := windows.GetNamedPipeClientProcessId(h, &pid); err != nil {
		return Peer{}, fmt.Errorf("the client's pid: %w", err)
	}
	u, err := processUser(pid)
	if err != nil {
		return Peer{PID: int(pid)}, err
	}
	return Peer{PID: int(pid), User: u}, nil
}

// serverPeer: who serves a dialed pipe.
func serverPeer(h windows.Handle) (Peer, error) {
	var pid uint32
	if err := windows.GetNamedPipeServerProcessId(h, &pid); err != nil {
		return Peer{}, fmt.Errorf("the server's pid: %w", err)
	}
	u, err := processUser(pid)
	if err != nil {
		return Peer{PID: int(pid)}, err
	}
	return Peer{PID: int(pid), User: u}, nil
}

// Me is the user this process runs as, as Peer.User says it: its SID.
func Me() (string, error) { return userSID() }

// userWords names a Peer.User for a person: "user S-1-5-21-…".
func userWords(u string) string { return "user " + u }
