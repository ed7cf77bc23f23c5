//go:build windows

package main

import (
	"path/filepath"

	"github.com/hearth-mcp/hearth/pkg/sockdir"
)

// socketIsOurs refuses a socket whose directory or file another user owns
// or may enter: whatever answers there would receive the request. Windows
// has no peer credential; the access lists are the check
// (docs/decisions/0047-windows-socket.md).
func socketIsOurs(socket string) error {
	if err := sockdir.Check(filepath.Dir(socket)); err != nil {
		return err
	}
	return sockdir.Check(socket)
}
