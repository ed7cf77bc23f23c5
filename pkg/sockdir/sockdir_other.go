//go:build !windows

package sockdir

import "errors"

// errNotWindows: elsewhere the socket's directory is checked by its mode and
// owner (daemon/listen_unix.go) and the peer by its credentials.
var errNotWindows = errors.New("sockdir: access lists are Windows's")

// Prepare is Windows's; see sockdir_windows.go.
func Prepare(dir string) error { return errNotWindows }

// Check is Windows's; see sockdir_windows.go.
func Check(path string) error { return errNotWindows }
