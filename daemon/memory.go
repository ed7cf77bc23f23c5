package daemon

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"go.uber.org/zap"
)

// Memory is returned to the system after a burst: Go's background scavenger
// gives back freed heap slowly (a 1 000-connection burst stayed at 357 MB
// long after it ended), so the daemon checks now and then how much free
// heap it keeps and, past a threshold, returns it at once. 16 MiB: a burst
// of 300 hosted instances left some 60 MB of free heap under the former
// 64 MiB, held for good (docs/decisions/0041-raw-nonblocking-io.md).
const (
	returnMemoryEvery = 5 * time.Second
	returnMemoryOver  = 16 << 20 // free heap kept before it is returned
)

// returnMemory runs until ctx ends.
func (d *Daemon) returnMemory(ctx context.Context) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	every(ctx, returnMemoryEvery, func() bool {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return false // the runtime does not offer the metric
		}
		if free := sample[0].Value.Uint64(); free > returnMemoryOver {
			debug.FreeOSMemory()
			d.log.Debug("returned free memory to the system", zap.Uint64("free_heap_bytes", free))
		}
		return true
	})
}
