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
	forceFramesTrial(c, 0.9, window{cost: 1, n: 1e12, wall: 1e9}) // no trial beats the window before
	c.trial.fromFrames, c.trial.fromImages = 0, 0                 // nothing to wait for
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
// intervals. The settle lasts until the refill is over (both tiers back
// to refillShare of their bytes before the trial, or an interval that
// missed no more than before it) or maxSettle intervals with accesses,
// not a fixed ten intervals (events point reads at 0.5× the memory, 4 KiB
// pages: a window with 1.9% misses after the ten, where R = 0.95 has
// none), and the controller gathers evidence again at once after it.
func TestTrialReturnSettlesUntilRefilled(t *testing.T) {
	p, n := simPool(t, 2, hotSetBudget, -1, 0, func(o *Options) { o.ControllerInterval = time.Hour })
	rng := rand.New(rand.NewPCG(13, 14))
	c := &p.ctl
	// read reads k pages and returns how many missed.
	read := func(k int) int64 {
		before := p.Stats().Misses
		for i := 0; i < k; i++ {
			readSimPage(t, p, PageID(rng.Uint64N(n)))
		}
		return p.Stats().Misses - before
	}
	c.mu.Lock()
	c.applyShare(p, 0.95)
	c.mu.Unlock()
	read(4000)
	const k = 2000
	ev := evidence{misses: read(k)}
	ev.hitsU = k - ev.misses
	before, _ := p.memory()
	forceFramesTrial(c, 0.95, window{cost: 1, n: 1e12, wall: 1e9}) // no trial beats the window before
	c.trial.refillFrom(before, ev)
	for c.trial.active {
		read(200)
		p.adjust()
	}
	if !c.settling {
		t.Fatal("a lost frames trial went back without a settle")
	}
	drained, _ := p.memory()
	t.Logf("images before the trial %.0f KiB (waited for: %.0f), after it %.0f KiB; misses before it %.1f%%",
		before.imageBytes/1024, c.trial.fromImages/1024, drained.imageBytes/1024, 100*c.trial.fromMisses)
	// Few reads an interval after it: the pages the trial dropped come
	// back over many intervals.
	const perInterval = 20
	allowed := c.trial.fromMisses * perInterval
	allowed += 2 * math.Sqrt(allowed)
	for i := 1; c.settling; i++ {
		missed := read(perInterval)
		p.adjust()
		m, _ := p.memory()
		refilled := m.frameBytes >= refillShare*c.trial.fromFrames && m.imageBytes >= refillShare*c.trial.fromImages
		over := refilled || float64(missed) <= allowed
		switch {
		case !c.settling && i < trialSettle:
			t.Fatalf("the settle ended after %d intervals, before trialSettle", i)
		case !c.settling && !over:
			t.Fatalf("the settle ended after %d intervals with the images at %.0f of %.0f KiB and %d of %d reads missing", i, m.imageBytes/1024, before.imageBytes/1024, missed, perInterval)
		case i == trialSettle && !c.settling && over:
			t.Fatalf("the refill was over after trialSettle intervals (images at %.0f of %.0f KiB, %d of %d reads missing): the test's premise (a longer refill) does not hold", m.imageBytes/1024, before.imageBytes/1024, missed, perInterval)
		case c.settling && i >= trialSettle && over:
			t.Fatalf("interval %d: the refill is over (images at %.0f of %.0f KiB, %d of %d reads missing), the settle lasts", i, m.imageBytes/1024, before.imageBytes/1024, missed, perInterval)
		case i >= maxSettle:
			t.Fatalf("the settle lasted maxSettle (%d) intervals: the refill never ended it", maxSettle)
		case !c.settling:
			t.Logf("the settle ended after %d intervals, images at %.0f of %.0f KiB, %d of %d reads missing", i, m.imageBytes/1024, before.imageBytes/1024, missed, perInterval)
		}
	}
	read(perInterval)
	p.adjust()
	if c.pend.accesses() == 0 {
		t.Fatal("the interval after the settle: the controller gathered no evidence")
	}
}

// TestSettleEndsWhenMissesStop: a tier that does not come back (the
// images after a frames trial on data that fits raw: nothing misses,
// nothing presses) ends the settle once an interval misses no more than
// the evidence the trial started on; while the refill misses, the settle
// lasts, up to maxSettle intervals with accesses, and idle intervals do
// not count.
func TestSettleEndsWhenMissesStop(t *testing.T) {
	c := testController()
	c.trial.from = 0.5
	c.trial.refillFrom(fullMem, evidence{hitsU: 990, misses: 10}) // 1% misses
	never := memState{frameBytes: fullMem.frameBytes, avail: fullMem.avail, budget: fullMem.budget}
	refilling := evidence{hitsU: 950, misses: 50}
	c.settling, c.settled = true, 0
	for i := 0; i < 2*trialSettle; i++ {
		c.settle(never, evidence{})
		c.settle(never, refilling)
	}
	if !c.settling {
		t.Fatalf("the settle ended after %d intervals missing 5%% (1%% before the trial), the images not back", c.settled)
	}
	c.settle(never, evidence{hitsU: 988, misses: 12})
	if c.settling {
		t.Fatal("an interval missing 1.2% (1% before the trial, within the noise): the settle lasts")
	}
	c.settling, c.settled = true, 0
	for i := 1; c.settling; i++ {
		if c.settle(never, refilling); i > maxSettle {
			t.Fatalf("the settle lasts beyond maxSettle (%d) intervals with accesses", maxSettle)
		}
	}
	if c.settled != maxSettle {
		t.Fatalf("the settle ended after %d intervals missing 5%%, want maxSettle (%d)", c.settled, maxSettle)
	}
}
