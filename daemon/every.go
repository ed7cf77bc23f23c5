package daemon

import (
	"context"
	"time"
)

// every calls f each period until ctx ends or f returns false: the loop of
// the daemon's periodic checks (watchdog, socket file, free memory).
func every(ctx context.Context, period time.Duration, f func() bool) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !f() {
			return
		}
	}
}
