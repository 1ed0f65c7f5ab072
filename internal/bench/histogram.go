package bench

import (
	"math/bits"
	"time"
)

// histogram records latencies in log-linear buckets, as HdrHistogram does:
// exact below 2·histSub nanoseconds, then histSub buckets per power of two,
// so every recorded value is known to within 1/histSub (about 3%). It is a
// fixed array: recording is an index computation and an increment, with
// no allocation, and one histogram per worker means no sharing; they are
// merged at the end of the phase.
type histogram struct {
	counts [histBuckets]uint64
	total  uint64
	max    uint64
}

const (
	histSubBits = 5
	histSub     = 1 << histSubBits
	// histMaxShift bounds the range at 2^(histMaxShift+histSubBits+1) ns,
	// about 2.2e12 ns (36 minutes); longer latencies land in the last
	// bucket.
	histMaxShift = 35
	histBuckets  = (histMaxShift + 2) * histSub
)

// histBucket returns the bucket of a value in nanoseconds.
func histBucket(v uint64) int {
	if v < 2*histSub {
		return int(v)
	}
	shift := bits.Len64(v) - (histSubBits + 1)
	if shift > histMaxShift {
		return histBuckets - 1
	}
	m := v >> shift // in [histSub, 2·histSub)
	return (shift+1)*histSub + int(m-histSub)
}

// histBucketRange returns the smallest and largest value of a bucket.
func histBucketRange(b int) (lo, hi uint64) {
	if b < 2*histSub {
		return uint64(b), uint64(b)
	}
	shift := b/histSub - 1
	m := uint64(b%histSub + histSub)
	return m << shift, (m+1)<<shift - 1
}

func (h *histogram) record(d time.Duration) {
	v := uint64(max(d, 0))
	h.counts[histBucket(v)]++
	h.total++
	h.max = max(h.max, v)
}

func (h *histogram) reset() { *h = histogram{} }

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.max = max(h.max, o.max)
}

// quantile returns the value below which a fraction q of the recorded
// values lie, as the midpoint of its bucket (capped by the maximum seen),
// in nanoseconds; 0 when nothing was recorded.
func (h *histogram) quantile(q float64) float64 {
	if h.total == 0 {
		return 0
	}
	rank := uint64(q*float64(h.total) + 0.5)
	rank = min(max(rank, 1), h.total)
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := histBucketRange(b)
			return min(float64(lo+hi)/2, float64(h.max))
		}
	}
	return float64(h.max)
}
