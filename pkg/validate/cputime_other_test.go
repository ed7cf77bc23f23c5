//go:build !unix

package validate

import "time"

// cpuTime is not measured here: the benchmark reports wall time only.
func cpuTime() time.Duration { return -1 }
