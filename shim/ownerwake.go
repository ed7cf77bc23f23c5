//go:build unix || windows

package shim

import "time"

// ownerPoll bounds each wait for the daemon: the longest a waiting shim
// sleeps between two looks at the data directory's owner when nothing
// wakes it sooner (ownerWake).
const ownerPoll = 10 * time.Millisecond

// ownerWake is how a shim waits for a daemon that is starting: for its
// owner record to be published (or removed) in the data directory, which
// a daemon does once its socket accepts (pkg/owner). Where the system can
// say when that file changes (Linux: inotify), a waiting shim looks again
// at once; elsewhere, or when the directory cannot be watched, it looks
// every ownerPoll. Ten clients starting ten shims at once, as an MCP
// client starting up does, are then each answered as soon as the daemon
// serves, not up to a poll interval later (docs/decisions/0045-hosted-catalog.md,
// the measurement).
type ownerWake struct {
	home  string
	armed bool // the watch is set up (or could not be)
	watch ownerWatch
}

// wait returns when the owner record may have changed, or after at most
// d. The first call only arms the watch and returns at once: the caller
// then looks again, so a record published before the watch began is not
// waited for.
func (w *ownerWake) wait(d time.Duration) {
	if !w.armed {
		w.armed = true
		if w.watch.open(w.home) {
			return
		}
	}
	if !w.watch.wait(d) {
		time.Sleep(d)
	}
}

// close releases the watch.
func (w *ownerWake) close() { w.watch.close() }
