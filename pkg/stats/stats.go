// Package stats keeps latency histograms cheap enough to update on every call.
//
// Buckets are log-linear (16 per power of two of microseconds, as HDR
// histograms do), so a quantile is within about 4% of the true value whatever
// the range, and memory is fixed: no samples are kept.
package stats

import (
	"math/bits"
	"sync"
	"time"
)

const (
	subBits    = 4 // 16 sub-buckets per power of two
	subBuckets = 1 << subBits
	maxPow     = 40 // 2^40 µs ≈ 12.7 days: anything longer lands in the last bucket
	numBuckets = (maxPow + 1) * subBuckets
)

// Histogram is a concurrency-safe latency histogram.
type Histogram struct {
	mu     sync.Mutex
	counts [numBuckets]uint64
	n      uint64
	max    time.Duration
}

func bucketOf(us uint64) int {
	if us < subBuckets {
		return int(us)
	}
	pow := bits.Len64(us) - 1 // us in [2^pow, 2^(pow+1))
	if pow > maxPow {
		return numBuckets - 1
	}
	shift := pow - subBits
	sub := int(us>>uint(shift)) - subBuckets // 0..15
	return (pow-subBits+1)*subBuckets + sub
}

// lowerBound is the smallest value in bucket i, in µs.
func lowerBound(i int) uint64 {
	if i < subBuckets {
		return uint64(i)
	}
	group := i/subBuckets - 1 // pow - subBits
	sub := uint64(i % subBuckets)
	return (subBuckets + sub) << uint(group)
}

// Record adds one observation.
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	b := bucketOf(uint64(d / time.Microsecond))
	h.mu.Lock()
	h.counts[b]++
	h.n++
	if d > h.max {
		h.max = d
	}
	h.mu.Unlock()
}

// Count is the number of observations.
func (h *Histogram) Count() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// Quantile returns an estimate of the q-quantile (0 < q ≤ 1): the midpoint of
// the bucket holding it, never above the largest observation. Zero when empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo := lowerBound(i)
			hi := lo + 1
			if i+1 < numBuckets {
				hi = lowerBound(i + 1)
			}
			mid := time.Duration((lo+hi)/2) * time.Microsecond
			if hi-lo <= 1 {
				mid = time.Duration(lo) * time.Microsecond
			}
			if mid > h.max {
				mid = h.max
			}
			return mid
		}
	}
	return h.max
}
