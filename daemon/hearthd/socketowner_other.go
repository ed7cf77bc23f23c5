//go:build !unix && !windows

package main

import (
	"fmt"
	"runtime"
)

// socketIsOurs: no daemon serves a socket off Unix yet
// (docs/decisions/0044-platforms.md).
func socketIsOurs(socket string) error {
	return fmt.Errorf("not supported on %s yet: hearthd serves no socket here, so there is no daemon to ask", runtime.GOOS)
}
