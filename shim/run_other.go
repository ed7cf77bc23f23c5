//go:build !unix && !windows

package shim

import (
	"fmt"
	"runtime"
)

// Run off Unix says plainly that the shim does not serve here yet: the
// daemon's socket and the checks that make reaching it safe are Unix's
// (docs/decisions/0044-platforms.md). Exit 1, as for an unreachable daemon.
func Run(opts Options) int {
	fmt.Fprintf(opts.Stderr, "hearth: not supported on %s yet: the shim reaches hearthd over a Unix socket, which is implemented for Linux, macOS and Windows only (docs/decisions/0044-platforms.md)\n", runtime.GOOS)
	return 1
}
