package bufferpool

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestTrialReturnSettles: a trial that goes back leaves the images it
// dropped to refill as their pages miss, and those misses, on pages the
// frames evicted, look to the uncompressed ghost like what more frames
// would save. For trialSettle intervals after the return the controller
// neither decides nor gathers evidence nor runs the gate; then, with
// nothing left to refill (the trial recorded no bytes to wait for: the
// minimum settle), it does again. (Sysbench point reads at 0.5× the
// memory, 4 KiB pages: one step after a lost frames trial took R from
// 0.95 to the floor, 1.6% misses.)
func TestTrialReturnSettles(t *testing.T) {
	p, n := simPool(t, 2, hotSetBudget, -1, 0, func(o *Options) { o.ControllerInterval = time.Hour })
	rng := rand.New(rand.NewPCG(9, 10))
	c := &p.ctl
	read := func() {
		for i := 0; i < 200; i++ {
			readSimPage(t, p, PageID(rng.Uint64N(n)))
		}
	}
	read()
	forceFramesTrial(c, 0.9, window{cost: 1, n: 1e12, wall: 1e9}) // no trial beats the window before; c.mem zero: nothing to wait for
	for c.trial.active {
		read()
		p.adjust()
	}
	if p.Share() != 0.9 {
		t.Fatalf("a lost frames trial: R %.2f after it, want 0.9", p.Share())
	}
	decided := func() bool {
		c.mu.Lock()
		c.lastLossU = -1
		gate := c.gateDem + c.gateSkipped
		c.mu.Unlock()
		read()
		p.adjust()
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.lastLossU >= 0 || c.pend.accesses() > 0 || c.gateDem+c.gateSkipped != gate
	}
	for i := 0; i < trialSettle; i++ {
		if decided() {
			t.Fatalf("interval %d after the return: the controller decided, gathered evidence or ran the gate", i+1)
		}
	}
	if !decided() {
		t.Fatalf("%d intervals after the return: want the controller deciding again", trialSettle+1)
	}
}

// TestTrialReturnSettlesUntilRefilled: after a lost frames trial the
// images refill partly at once (the frames shrink, demoting their pages)
// and the rest only as their pages miss, here over more than trialSettle
// intervals. The settle lasts until the refill is over or maxSettle
// intervals with accesses, not a fixed ten intervals (events point reads
// at 0.5× the memory, 4 KiB pages: a window with 1.9% misses after the
// ten, where R = 0.95 has none): when it ends the misses are back near
// their share before the trial, and the controller gathers evidence
// again at once.
func TestTrialReturnSettlesUntilRefilled(t *testing.T) {
	p, n := simPool(t, 2, hotSetBudget, -1, 0, func(o *Options) { o.ControllerInterval = time.Hour })
	rng := rand.New(rand.NewPCG(13, 14))
	c := &p.ctl
	// read reads k pages and returns how many missed and hit an image.
	read := func(k int) (misses, hitsC float64) {
		before := p.Stats()
		for i := 0; i < k; i++ {
			readSimPage(t, p, PageID(rng.Uint64N(n)))
		}
		after := p.Stats()
		return float64(after.Misses - before.Misses), float64(after.HitsCompressed - before.HitsCompressed)
	}
	c.mu.Lock()
	c.applyShare(p, 0.95)
	c.mu.Unlock()
	read(4000)
	const k = 2000
	misses, hitsC := read(k)
	// The window the trial is judged against: these shares, and a rate
	// no trial beats.
	before := window{cost: 1, n: 1e12, wall: 1e9, misses: 1e12 * misses / k, hitsC: 1e12 * hitsC / k}
	c.mem, _ = p.memory()
	forceFramesTrial(c, 0.95, before)
	for c.trial.active {
		read(200)
		p.adjust()
	}
	if !c.settling {
		t.Fatal("a lost frames trial went back without a settle")
	}
	drained, _ := p.memory()
	t.Logf("images before the trial %.0f KiB, after it %.0f KiB; misses before it %.1f%%",
		c.mem.imageBytes/1024, drained.imageBytes/1024, 100*misses/k)
	// Few reads an interval after it: the pages the trial dropped come
	// back over many intervals.
	const perInterval = 20
	var last [trialSettle]float64 // misses in the last intervals
	i := 1
	for ; c.settling; i++ {
		last[i%trialSettle], _ = read(perInterval)
		p.adjust()
		if i > maxSettle {
			t.Fatalf("the settle lasts beyond maxSettle (%d) intervals", maxSettle)
		}
	}
	ended, _ := p.memory()
	var missed float64
	for _, m := range last {
		missed += m
	}
	expected := misses / k * perInterval * trialSettle
	t.Logf("the settle ended after %d intervals: images at %.0f of %.0f KiB, %.0f misses in its last %d intervals (%.1f expected before the trial)",
		i-1, ended.imageBytes/1024, c.mem.imageBytes/1024, missed, trialSettle, expected)
	switch {
	case i-1 <= trialSettle:
		t.Fatalf("the settle ended after %d intervals, images at %.0f of %.0f KiB: no longer than trialSettle while the pages missed", i-1, ended.imageBytes/1024, c.mem.imageBytes/1024)
	case i-1 >= maxSettle:
		t.Fatalf("the settle ran to maxSettle (%d intervals): the refill never ended it", maxSettle)
	case ended.imageBytes < refillShare*c.trial.fromImages && missed > 1.5*expected+3*math.Sqrt(expected):
		// fromImages: the images' bytes before the trial, at most their
		// share then (R × avail; they may hold more where the frames
		// leave memory unused, which a refill need not take back).
		t.Fatalf("the settle ended with the images at %.0f of %.0f KiB and %.0f misses in its last %d intervals (%.1f before the trial): the refill was not over", ended.imageBytes/1024, c.trial.fromImages/1024, missed, trialSettle, expected)
	}
	read(perInterval)
	p.adjust()
	if c.pend.accesses() == 0 {
		t.Fatal("the interval after the settle: the controller gathered no evidence")
	}
}

// TestSettleEndsWhenMissesStop: a tier that does not come back (the
// images after a frames trial on data that fits raw: nothing misses,
// nothing presses) ends the settle once the last trialSettle intervals
// missed and hit images no more than the window the trial was judged
// against; after a copy trial, whose frames come back as their pages hit
// images, the image hits must be back too. While the refill lasts the
// settle does, up to maxSettle intervals with accesses; idle intervals do
// not count.
func TestSettleEndsWhenMissesStop(t *testing.T) {
	c := testController()
	c.trial.from = 0.5
	c.trial.before = window{n: 10000, misses: 100, hitsC: 1000} // 1% misses, 10% image hits
	c.trial.refillFrom(fullMem)
	never := memState{avail: fullMem.avail, budget: fullMem.budget} // neither tier comes back
	iv := func(misses, hitsC float64) window { return window{n: 1000, misses: misses, hitsC: hitsC} }
	for _, tc := range []struct {
		name    string
		refill  window // the intervals while the refill lasts
		settled window // then
	}{
		{"after a frames trial (misses)", iv(50, 60), iv(12, 100)},
		{"after a copy trial (image hits)", iv(10, 300), iv(10, 105)},
	} {
		c.settling, c.settled = true, 0
		for i := 0; i < 2*trialSettle; i++ {
			c.settle(never, window{})
			c.settle(never, tc.refill)
		}
		if !c.settling {
			t.Fatalf("%s: the settle ended after %d intervals of the refill, the tiers not back", tc.name, c.settled)
		}
		for i := 0; i < trialSettle-1; i++ {
			if c.settle(never, tc.settled); !c.settling {
				t.Fatalf("%s: the settle ended %d intervals after the refill, with refill intervals in its last %d", tc.name, i+1, trialSettle)
			}
		}
		if c.settle(never, tc.settled); c.settling {
			t.Fatalf("%s: %d intervals back to the shares before the trial (within the noise): the settle lasts", tc.name, trialSettle)
		}
		c.settling, c.settled = true, 0
		for i := 1; c.settling; i++ {
			if c.settle(never, tc.refill); i > maxSettle {
				t.Fatalf("%s: the settle lasts beyond maxSettle (%d) intervals with accesses", tc.name, maxSettle)
			}
		}
		if c.settled != maxSettle {
			t.Fatalf("%s: the settle ended after %d intervals of the refill, want maxSettle (%d)", tc.name, c.settled, maxSettle)
		}
	}
}

// TestTrialRecordsWhatItsReturnWaitsFor: a trial that starts records the
// tiers' bytes as far as they fit at the R it returns to (a decision that
// stepped down from where the pool was left images it cannot hold there)
// and the shares of misses and image hits in the window it is judged
// against.
func TestTrialRecordsWhatItsReturnWaitsFor(t *testing.T) {
	c := testController()
	c.mem = memState{frameBytes: 16 << 20, imageBytes: 48 << 20, resident: 64 << 20, avail: 64 << 20, budget: 64 << 20}
	before := window{cost: 100e3, n: 1000, wall: 100e6, misses: 20, hitsC: 100}
	for i := 0; i < trialSettle+trialMeasure; i++ {
		c.trial.observeSteady(before, 0.3)
	}
	for i := 0; i < trialPatience && !c.trial.active; i++ {
		c.considerTrial(0.3, 0.3, 0.5, exclusiveEv, false, true, time.Unix(1000, 0))
	}
	if !c.trial.active {
		t.Fatal("no trial started")
	}
	tr := &c.trial
	if want := 0.3 * c.mem.avail; tr.fromImages != want {
		t.Errorf("images waited for %.0f, want %.0f (what fits at R 0.3)", tr.fromImages, want)
	}
	if want := c.mem.frameBytes; tr.fromFrames != want {
		t.Errorf("frames waited for %.0f, want %.0f", tr.fromFrames, want)
	}
	if tr.fromMisses != 0.02 || tr.fromNotFrames != 0.12 {
		t.Errorf("shares waited for: misses %.3f, not frame hits %.3f; want 0.020 and 0.120", tr.fromMisses, tr.fromNotFrames)
	}
}
