//go:build windows

package endpoint

import "syscall"

// userRuntimeDir: Windows has no per-user runtime directory; the socket's
// place is %LOCALAPPDATA%\hearth (SocketDir).
func userRuntimeDir() string { return "" }

// userHome is the account's profile directory, from this process's token:
// Windows's counterpart of the home in /etc/passwd, found without any
// variable.
func userHome() string {
	t, err := syscall.OpenCurrentProcessToken()
	if err != nil {
		return ""
	}
	defer t.Close()
	dir, err := t.GetUserProfileDirectory()
	if err != nil {
		return ""
	}
	return dir
}

// Account: the environment's USERNAME and COMSPEC stand on Windows.
func Account() (name, shell string) { return "", "" }
