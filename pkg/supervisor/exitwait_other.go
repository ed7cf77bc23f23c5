//go:build !linux

package supervisor

import "os"

// awaitExit cannot wait for a child's exit in the runtime's poller here;
// the caller's Wait blocks an OS thread while the child runs (and Start
// locks that goroutine to it, so the thread ends with the goroutine
// rather than staying in the runtime's pool).
func awaitExit(*os.Process) bool { return false }
