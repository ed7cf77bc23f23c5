package stats

import (
	"math"
	"testing"
	"time"
)

func TestBucketsAreMonotonic(t *testing.T) {
	prev := -1
	for us := uint64(0); us < 1<<20; us += 7 {
		b := bucketOf(us)
		if b < prev {
			t.Fatalf("bucket of %d is %d, below %d", us, b, prev)
		}
		if lo := lowerBound(b); lo > us {
			t.Fatalf("lower bound %d of bucket %d above value %d", lo, b, us)
		}
		prev = b
	}
}

func TestQuantiles(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 {
		t.Fatal("empty histogram must report 0")
	}
	// 1..1000 ms uniformly: p50 ≈ 500 ms, p99 ≈ 990 ms.
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	check := func(q float64, want time.Duration) {
		got := h.Quantile(q)
		if rel := math.Abs(float64(got-want)) / float64(want); rel > 0.05 {
			t.Errorf("q%.2f = %v, want %v ±5%%", q, got, want)
		}
	}
	check(0.5, 500*time.Millisecond)
	check(0.99, 990*time.Millisecond)
	if got := h.Quantile(1); got > time.Second {
		t.Errorf("max quantile %v exceeds the largest observation", got)
	}
	if h.Count() != 1000 {
		t.Fatalf("count %d", h.Count())
	}
}
