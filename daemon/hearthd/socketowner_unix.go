//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// socketIsOurs refuses a socket file another user owns: whatever answers
// there would receive the request.
func socketIsOurs(socket string) error {
	var st syscall.Stat_t
	if err := syscall.Stat(socket, &st); err != nil {
		return err
	}
	if int(st.Uid) != os.Getuid() {
		return fmt.Errorf("the socket %s belongs to uid %d, not to you; refusing to talk to it", socket, st.Uid)
	}
	return nil
}
