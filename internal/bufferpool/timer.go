package bufferpool

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/codec"
)

// Timing the pool's costs for the controller.
//
// Loads and demotions add the durations of their reads, decompressions,
// compressions and whole accesses to timers without locks; each
// controller interval takes every timer's events and folds them into a
// moving average (ewma). A timer keeps its events in buckets a quarter of
// an octave wide, so that the interval's total can be taken robustly: a
// duration beyond timerOutlier times the interval's median counts as
// that (with fewer than timerMedianEvents events, times the timer's own
// moving average of what it reported before, once it has one). Under CPU contention a thread
// descheduled in the middle of a load stretches that one load a
// hundredfold (an image hit of 26 µs measured at 4 ms): about one load in
// a hundred of 26 µs, one in twenty of 200 µs, beside two busy loops. A
// few such loads in an interval of a thousand raised the interval's mean
// image-hit time from 26 to 97 µs, and the far view (depth.go) jumped R
// from 0.93 to 0.20 on that one interval (docs/BENCHMARKS.md).
//
// What is bounded is what is far from the median, so a real cost that
// comes in two modes is timed in two timers: a load whose frame
// allocation compressed a demotion (300–1,500 µs with zstd-19, against 26
// µs for an image hit whose demotion is free) or waited for the page
// cleaner is timed apart from one whose did not, each bounded by its own
// median, and the two are folded together. A real change of cost moves
// the median and is followed at once (in intervals of few events, by up to
// timerOutlier times a decision); a disk's tail within timerOutlier of its
// median is kept. Real costs that are cut: any minority of a timer's events
// beyond that bound, such as a device read among reads the OS cache
// served, or a wait for the partition's lock.
//
// Lock rules: none. A timer is updated and taken with atomics; a take
// that races an add may see the add's count without its duration or the
// reverse, which misplaces one event (the median is kept within its
// bucket's range).

// timerOutlier bounds a duration, as a multiple of its interval's median,
// in the total a timer reports; an interval of fewer than
// timerMedianEvents events is bounded by its timer's moving average
// instead (of two loads, one stretched is the upper median).
const (
	timerOutlier      = 8
	timerMedianEvents = 16
)

// Buckets: four per octave from 2^timerMinOctave ns (256 ns) to 2^31 ns
// (about 2 s); shorter durations fall in the first and longer in the last.
const (
	timerMinOctave = 8
	timerBuckets   = 4 * (31 - timerMinOctave)
)

// timer accumulates durations between controller ticks without locks.
type timer struct {
	b [timerBuckets]struct{ n, nanos atomic.Int64 }
	// ref is the moving average of what take reported: the bound of an
	// interval of few events. Only take reads and writes it (the
	// controller, under its mutex).
	ref ewma
}

// timerBucket is the bucket of a duration of d nanoseconds.
func timerBucket(d int64) int {
	if d <= 0 {
		return 0
	}
	top := bits.Len64(uint64(d)) - 1 // d in [2^top, 2^(top+1))
	quarter := 0
	if top >= 2 {
		quarter = int(d>>(top-2)) & 3
	}
	return min(timerBuckets-1, max(0, 4*(top-timerMinOctave)+quarter))
}

func (t *timer) add(d time.Duration) {
	b := &t.b[timerBucket(int64(d))]
	b.nanos.Add(int64(d))
	b.n.Add(1)
}

// timerBucketEnd is the least duration, in nanoseconds, beyond bucket i
// (none beyond the last).
func timerBucketEnd(i int) float64 {
	if i >= timerBuckets-1 {
		return math.Inf(1)
	}
	top, quarter := i/4+timerMinOctave, i%4
	return float64(int64(5+quarter) << (top - 2))
}

// timerBucketStart is the least duration, in nanoseconds, in bucket i
// (bucket 0 also holds all shorter ones).
func timerBucketStart(i int) float64 {
	if i == 0 {
		return 0
	}
	return timerBucketEnd(i - 1)
}

// take returns and resets the count of the events since the last take,
// and their total with each duration bounded by timerOutlier times their
// median, or, with fewer than timerMedianEvents events, times the timer's
// moving average (once it has one).
func (t *timer) take() (n, nanos int64) {
	var counts, sums [timerBuckets]int64
	for i := range t.b {
		if t.b[i].n.Load() != 0 || t.b[i].nanos.Load() != 0 {
			counts[i], sums[i] = t.b[i].n.Swap(0), t.b[i].nanos.Swap(0)
			n += counts[i]
		}
	}
	if n <= 0 {
		return 0, 0
	}
	// The upper median (of two, the slower): the mean of its bucket, kept
	// within the bucket (a take that races an add may see a count
	// without its duration).
	var median float64
	for i, seen := 0, int64(0); i < timerBuckets; i++ {
		if counts[i] <= 0 {
			continue
		}
		if seen += counts[i]; seen > n/2 {
			mean := float64(sums[i]) / float64(counts[i])
			median = math.Min(math.Max(mean, timerBucketStart(i)), timerBucketEnd(i))
			break
		}
	}
	if n < timerMedianEvents && t.ref.valid {
		median = t.ref.v
	}
	bound := timerOutlier * median
	var total float64
	for i, k := range counts {
		if k > 0 && sums[i] > 0 {
			total += math.Min(float64(sums[i]), float64(k)*bound)
		}
	}
	t.ref.fold(n, int64(total))
	return n, int64(total)
}

// timing holds the pool's measurements of its three costs, and the whole
// time of an access that hit an image or missed (from the start of the load
// to its end: the eviction it caused, compression included, the store read,
// decompression, verification and any wait for the partition's lock).
type timing struct {
	disk, decom, comp timer
	decomBy           [numCodecs]timer // decompressions per codec
	// Whole times, of the loads whose frame allocation neither compressed
	// nor waited for the cleaner and of those whose did (two modes, timed
	// apart: see the top of this file).
	hitC, hitCSlow, miss, missSlow timer
}

// addHitC times an image hit of whole duration d, whose frame allocation
// compressed demotions and waited for the cleaner for slow.
func (t *timing) addHitC(d, slow time.Duration) {
	if slow > 0 {
		t.hitCSlow.add(d)
	} else {
		t.hitC.add(d)
	}
}

// addMiss times a miss of whole duration d, whose frame allocation
// compressed demotions and waited for the cleaner for slow.
func (t *timing) addMiss(d, slow time.Duration) {
	if slow > 0 {
		t.missSlow.add(d)
	} else {
		t.miss.add(d)
	}
}

// numCodecs bounds the codec ids timed separately.
const numCodecs = 8

func (t *timing) addDecom(c codec.ID, d time.Duration) {
	t.decom.add(d)
	if int(c) < numCodecs {
		t.decomBy[c].add(d)
	}
}

// ewma is an exponentially weighted moving average of per-event costs.
type ewma struct {
	v     float64 // nanoseconds
	valid bool
}

// fold merges an interval's n events of total nanos: the weight of the new
// interval grows with its number of events, so a quiet interval barely
// moves the average and a busy one dominates it.
func (e *ewma) fold(n, nanos int64) {
	if n == 0 {
		return
	}
	mean := float64(nanos) / float64(n)
	if !e.valid {
		e.v, e.valid = mean, true
		return
	}
	w := 1 - math.Pow(0.5, float64(n)/64) // half-life of 64 events
	e.v += w * (mean - e.v)
}

// foldTimers takes the intervals of timers (the modes of one cost), each
// bounded by its own median, and folds them.
func (e *ewma) foldTimers(timers ...*timer) {
	var n, nanos int64
	for _, t := range timers {
		k, ns := t.take()
		n, nanos = n+k, nanos+ns
	}
	e.fold(n, nanos)
}

// value is the average, or 0 before the first event.
func (e *ewma) value() float64 {
	if !e.valid {
		return 0
	}
	return e.v
}
