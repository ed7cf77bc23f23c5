//go:build linux && race

package rawio

import (
	"runtime"
	"unsafe"
)

// Under the race detector, a raw call's buffer is reported as the
// ordinary calls report theirs (package syscall does the same): read(2)
// writes p, write(2) reads it. The detector cannot see inside the kernel.

func raceWrote(p []byte, n int) {
	if n > 0 {
		runtime.RaceWriteRange(unsafe.Pointer(&p[0]), n)
	}
}

func raceReading(p []byte) {
	if len(p) > 0 {
		runtime.RaceReadRange(unsafe.Pointer(&p[0]), len(p))
	}
}
