package bufferpool

import (
	"math"
	"math/rand/v2"
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
	// The incident of the far view's jump: 97 µs on average, 2% stretched.
	for range 982 {
		tm.add(26 * time.Microsecond)
	}
	for range 18 {
		tm.add(4 * time.Millisecond)
	}
	if n, nanos := tm.take(); n != 1000 || time.Duration(nanos/n) > 30*time.Microsecond {
		t.Fatalf("18 stretched loads in 1,000: mean %v, want near 26 µs", time.Duration(nanos/n))
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
// disk's tail within timerOutlier of its median) keep their mean, and a
// change of cost is followed in the interval it happens.
func TestTimerKeepsRealCosts(t *testing.T) {
	cases := []struct {
		name string
		durs map[time.Duration]int
		mean time.Duration
	}{
		{"bimodal", map[time.Duration]int{20 * time.Microsecond: 500, 100 * time.Microsecond: 500}, 60 * time.Microsecond},
		{"disk tail", map[time.Duration]int{30 * time.Microsecond: 900, 200 * time.Microsecond: 100}, 47 * time.Microsecond},
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

// TestTimerSmallIntervals: an interval of a few events has no median to
// speak of. Of two reads, one from the OS's cache and one from the device,
// neither is an outlier; once the timer knows its cost, a device read among
// cached ones is kept and one load stretched by a descheduled thread is
// bounded even among four.
func TestTimerSmallIntervals(t *testing.T) {
	var tm timer
	tm.add(5 * time.Microsecond)
	tm.add(200 * time.Microsecond)
	if n, nanos := tm.take(); n != 2 || time.Duration(nanos) != 205*time.Microsecond {
		t.Errorf("two reads: %d events, %v in all, want 2 and 205µs", n, time.Duration(nanos))
	}
	tm = timer{ref: ewma{v: float64(100 * time.Microsecond), valid: true}}
	tm.add(5 * time.Microsecond)
	tm.add(5 * time.Microsecond)
	tm.add(200 * time.Microsecond)
	if n, nanos := tm.take(); n != 3 || time.Duration(nanos) != 210*time.Microsecond {
		t.Errorf("two cached reads and a device read, reads known at 100µs: %d events, %v in all, want 3 and 210µs", n, time.Duration(nanos))
	}
	tm = timer{ref: ewma{v: float64(26 * time.Microsecond), valid: true}}
	for range 3 {
		tm.add(26 * time.Microsecond)
	}
	tm.add(4 * time.Millisecond)
	if n, nanos := tm.take(); n != 4 || time.Duration(nanos/n) > 80*time.Microsecond {
		t.Errorf("a stretched load in four: %d events, mean %v, want 4 and ≤ 80µs", n, time.Duration(nanos/n))
	}
}

// TestTimerTakeRacingAdd: a take that sees counts without their durations
// (an add between its two steps) must not bound the interval to nothing.
func TestTimerTakeRacingAdd(t *testing.T) {
	var tm timer
	tm.b[timerBucket(int64(26*time.Microsecond))].n.Add(2) // counted, durations not yet added
	tm.add(30 * time.Microsecond)
	if n, nanos := tm.take(); n != 3 || time.Duration(nanos) != 30*time.Microsecond {
		t.Errorf("%d events, %v in all, want 3 and 30µs", n, time.Duration(nanos))
	}
	// One count of three without its duration: the median bucket's mean
	// is two thirds of its events' and would lower the bound.
	tm = timer{}
	tm.add(26 * time.Microsecond)
	tm.add(26 * time.Microsecond)
	tm.b[timerBucket(int64(26*time.Microsecond))].n.Add(1)
	tm.add(180 * time.Microsecond)
	if n, nanos := tm.take(); n != 4 || time.Duration(nanos) != 232*time.Microsecond {
		t.Errorf("%d events, %v in all, want 4 and 232µs", n, time.Duration(nanos))
	}
}

// TestProbeReadBounded: a probe (one store read when nothing misses) that
// a descheduled controller goroutine stretched is bounded like the timers'
// outliers: it moved T_disk_read from 100 µs to over 1 ms.
func TestProbeReadBounded(t *testing.T) {
	var c controller
	c.tDisk = ewma{v: float64(100 * time.Microsecond), valid: true}
	c.ageMissCost(5*time.Millisecond, 10*time.Microsecond)
	if max := 100*time.Microsecond + (timerOutlier*100*time.Microsecond-100*time.Microsecond)/4; time.Duration(c.tDisk.v) > max {
		t.Fatalf("T_disk_read %v after a 5 ms probe, want ≤ %v", time.Duration(c.tDisk.v), max)
	}
	c = controller{}
	c.tDisk = ewma{v: float64(100 * time.Microsecond), valid: true}
	c.tDecom = ewma{v: float64(20 * time.Microsecond), valid: true}
	c.ageMissCost(100*time.Microsecond, 5*time.Millisecond)
	if max := 100*time.Microsecond + timerOutlier*20*time.Microsecond; !c.tMiss.valid || time.Duration(c.tMiss.v) > max {
		t.Fatalf("T_miss %v after a probe decompressing for 5 ms, want ≤ %v", time.Duration(c.tMiss.v), max)
	}
}

// TestTimingKeepsCompressingLoads: image hits whose eviction compressed a
// demotion cost forty times the others; as a minority (5%, and a few in a
// short interval, spread over 300–1,500 µs) they are a real part of what
// image hits cost, timed apart and folded in whole. Which loads compressed
// is what the pool reports (TestLoadsThatCompressedTimedApart).
func TestTimingKeepsCompressingLoads(t *testing.T) {
	for _, tc := range []struct {
		free, comp int
	}{{950, 50}, {60, 6}, {19, 1}} {
		var tg timing
		var want time.Duration
		for range tc.free {
			tg.addHitC(25*time.Microsecond, 0)
			want += 25 * time.Microsecond
		}
		for i := range tc.comp {
			d := 300*time.Microsecond + time.Duration(i)*1200*time.Microsecond/time.Duration(tc.comp)
			tg.addHitC(d+25*time.Microsecond, d)
			want += d + 25*time.Microsecond
		}
		var e ewma
		e.foldTimers(&tg.hitC, &tg.hitCSlow)
		want /= time.Duration(tc.free + tc.comp)
		if got := time.Duration(e.v); got < want*99/100 || got > want*101/100 {
			t.Errorf("%d free and %d compressing image hits: T_hit %v, want %v", tc.free, tc.comp, got, want)
		}
	}
}

// TestLoadsThatCompressedTimedApart: at R = 0.05 pages keep no image, so a
// miss's frame allocation compresses the page it demotes: those misses are
// timed in the slow timer, the rest in the other.
func TestLoadsThatCompressedTimedApart(t *testing.T) {
	p, n := simPool(t, 3, hotSetBudget, 0.05, 0, func(o *Options) { o.ControllerInterval = time.Hour }) // the test takes the timers
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2 * n {
		readSimPage(t, p, PageID(rng.Uint64N(n)))
	}
	slow, _ := p.timing.missSlow.take()
	fast, _ := p.timing.miss.take()
	comps, _ := p.timing.comp.take()
	if slow == 0 || comps == 0 || slow > comps {
		t.Fatalf("%d misses timed as compressing, %d not, %d compressions: want some, and no more than the compressions", slow, fast, comps)
	}
}
