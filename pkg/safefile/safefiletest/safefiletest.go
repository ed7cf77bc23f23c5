// Package safefiletest makes the special files pkg/safefile refuses (a FIFO,
// a Unix socket, a device), for the tests of the packages that read files a
// client names.
package safefiletest

import (
	"testing"
	"time"
)

// Special is one special file Make created.
type Special struct {
	Name string // its name in the directory
	Kind string // as safefile.Kind names it: "FIFO", "socket" or "device"
}

// Make creates the directory dir (if needed) and in it a FIFO "fifo", a
// listening Unix socket "sock" and, when the test runs as root, a character
// device "dev" (1:3, what /dev/null is). A kind that cannot be made here
// (another system, no privilege) is left out and logged.
func Make(tb testing.TB, dir string) []Special {
	tb.Helper()
	return create(tb, dir)
}

// Names are the names of specials.
func Names(specials []Special) []string {
	var out []string
	for _, s := range specials {
		out = append(out, s.Name)
	}
	return out
}

// Prompt runs fn and fails tb if fn has not returned within 10 seconds: a
// read of a FIFO blocks until a writer comes, which in a test is never. fn
// runs on another goroutine, so it must report with Errorf, not Fatal.
func Prompt(tb testing.TB, what string, fn func()) {
	tb.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		tb.Fatalf("%s did not return within 10 s (blocked opening or reading a special file?)", what)
	}
}

// create makes the special files in dir where the system can
// (make_linux.go sets it); elsewhere none, and says so.
var create = func(tb testing.TB, dir string) []Special {
	tb.Logf("no special files made in %s on this system", dir)
	return nil
}
