package localsock

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// On Windows the daemon serves a named pipe, not an AF_UNIX socket
// (docs/decisions/0064-windows-named-pipe.md). Its name and its security
// descriptor are pure functions of the user and the socket's path, written
// here so that every system tests them.

// PipePrefix begins every pipe name hearth serves.
const PipePrefix = `\\.\pipe\hearth-`

// PipeName is the pipe that serves the socket path for the user whose SID
// this is: the user's SID in it (a per-user name), and a hash of the path
// (one pipe per data directory, as one socket per directory on Unix).
// Windows compares pipe names, and paths, without regard to case, and takes
// / for \, so both are folded before hashing. Pipe names may not hold a
// backslash past the prefix; a SID and hex digits never do.
func PipeName(userSID, path string) string {
	p := strings.ToLower(strings.ReplaceAll(path, "/", `\`))
	sum := sha256.Sum256([]byte(p))
	return PipePrefix + userSID + "-" + hex.EncodeToString(sum[:8])
}

// PipeSDDL is the security descriptor of the daemon's pipe: owned by the
// user; a protected list (P) granting everything (GA) to the user and to
// the system alone. Nobody else may connect, nor create another instance
// of the pipe (that needs FILE_CREATE_PIPE_INSTANCE, which the list gives
// only the user).
func PipeSDDL(userSID string) string {
	return "O:" + userSID + "D:P(A;;GA;;;" + userSID + ")(A;;GA;;;" + SIDSystem + ")"
}
