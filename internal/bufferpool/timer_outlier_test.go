package bufferpool

import (
	"math"
	"testing"
	"time"
)

// TestTimerBoundsDescheduledLoads: a few loads stretched a hundredfold by
// a descheduled thread must not move an interval's cost (they raised the
// mean image-hit time from 26 to 97 µs and the far view jumped on it).
func TestTimerBoundsDescheduledLoads(t *testing.T) {
	var tm timer
	for i := range 995 {
		tm.add(time.Duration(24+i%5) * time.Microsecond) // 24–28 µs
	}
	for range 5 {
		tm.add(10 * time.Millisecond)
	}
	n, nanos := tm.take()
	mean := time.Duration(nanos / n)
	if n != 1000 || mean > 30*time.Microsecond {
		t.Fatalf("%d events, mean %v: want 1000 events near 26 µs (unbounded: %v)", n, mean,
			(995*26*time.Microsecond+5*10*time.Millisecond)/1000)
	}
	if n, nanos := tm.take(); n != 0 || nanos != 0 {
		t.Fatalf("take did not reset: %d events, %d ns", n, nanos)
	}
	// A short interval: two stretched loads in sixty.
	for range 60 {
		tm.add(26 * time.Microsecond)
	}
	tm.add(5 * time.Millisecond)
	tm.add(3 * time.Millisecond)
	if n, nanos := tm.take(); n != 62 || time.Duration(nanos/n) > 40*time.Microsecond {
		t.Fatalf("short interval: %d events, mean %v: want 62 near 26 µs", n, time.Duration(nanos/n))
	}
}

// TestTimerKeepsRealCosts: costs that really vary (two kinds of load, a
// disk's tail within timerOutlier of its median, a minority of image hits
// whose demotion compresses at 40 times the others' cost) keep their mean,
// and a change of cost is followed in the interval it happens.
func TestTimerKeepsRealCosts(t *testing.T) {
	cases := []struct {
		name string
		durs map[time.Duration]int
		mean time.Duration
	}{
		{"bimodal", map[time.Duration]int{20 * time.Microsecond: 500, 100 * time.Microsecond: 500}, 60 * time.Microsecond},
		{"disk tail", map[time.Duration]int{30 * time.Microsecond: 900, 200 * time.Microsecond: 100}, 47 * time.Microsecond},
		{"compressing demotions", map[time.Duration]int{25 * time.Microsecond: 950, 1000 * time.Microsecond: 50}, 73750 * time.Nanosecond},
		{"a short interval's compressing demotions", map[time.Duration]int{25 * time.Microsecond: 60, 1000 * time.Microsecond: 6}, 113636 * time.Nanosecond},
		{"slower", map[time.Duration]int{400 * time.Microsecond: 10}, 400 * time.Microsecond},
		{"one event", map[time.Duration]int{5 * time.Millisecond: 1}, 5 * time.Millisecond},
	}
	for _, tc := range cases {
		var tm timer
		for d, k := range tc.durs {
			for range k {
				tm.add(d)
			}
		}
		n, nanos := tm.take()
		got := float64(nanos) / float64(n)
		if math.Abs(got-float64(tc.mean)) > 0.01*float64(tc.mean) {
			t.Errorf("%s: mean %v, want %v", tc.name, time.Duration(got), tc.mean)
		}
	}
}

// TestTimerBuckets: buckets grow with the duration and are at most a
// quarter of an octave wide.
func TestTimerBuckets(t *testing.T) {
	last := -1
	for d := int64(1); d < 4e9; d = d*9/8 + 1 {
		b := timerBucket(d)
		if b < last || b >= timerBuckets {
			t.Fatalf("duration %d ns: bucket %d after %d", d, b, last)
		}
		if end := timerBucketEnd(b); d >= 1<<timerMinOctave && b < timerBuckets-1 && (float64(d) >= end || timerBucket(int64(end)) != b+1) {
			t.Fatalf("duration %d ns in bucket %d, which ends at %.0f ns", d, b, end)
		}
		last = b
		if d >= 1<<timerMinOctave && d*5/4+1 < 1<<31 && timerBucket(d*5/4+1) == b {
			t.Fatalf("durations %d and %d ns share bucket %d: wider than a quarter octave", d, d*5/4+1, b)
		}
	}
}
