package bufferpool

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestTrialReturnSettles: a trial that goes back leaves the images it
// dropped to refill as their pages miss, and those misses, on pages the
// frames evicted, look to the uncompressed ghost like what more frames
// would save. For trialSettle intervals after the return the controller
// neither decides nor gathers evidence nor runs the gate; then it does
// again. (Sysbench point reads at 0.5× the memory, 4 KiB pages: one step
// after a lost frames trial took R from 0.95 to the floor, 1.6% misses.)
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
// intervals. The settle lasts until both tiers are back to refillShare of
// their bytes before the trial (or maxSettle intervals with accesses),
// not a fixed ten intervals (events point reads at 0.5× the memory,
// 4 KiB pages: a window with 1.9% misses after the ten, where R = 0.95
// has none), and the controller decides again at once after it.
func TestTrialReturnSettlesUntilRefilled(t *testing.T) {
	p, n := simPool(t, 2, hotSetBudget, -1, 0, func(o *Options) { o.ControllerInterval = time.Hour })
	rng := rand.New(rand.NewPCG(13, 14))
	c := &p.ctl
	read := func(k int) {
		for i := 0; i < k; i++ {
			readSimPage(t, p, PageID(rng.Uint64N(n)))
		}
	}
	c.mu.Lock()
	c.applyShare(p, 0.9)
	c.mu.Unlock()
	read(4000)
	before, _ := p.memory()
	forceFramesTrial(c, 0.9, window{cost: 1, n: 1e12, wall: 1e9}) // no trial beats the window before
	c.trial.fromFrames, c.trial.fromImages = before.frameBytes, before.imageBytes
	for c.trial.active {
		read(200)
		p.adjust()
	}
	if !c.settling {
		t.Fatal("a lost frames trial went back without a settle")
	}
	drained, _ := p.memory()
	t.Logf("images before the trial %.0f KiB, after it %.0f KiB", before.imageBytes/1024, drained.imageBytes/1024)
	// Few reads an interval after it: the pages the trial dropped come
	// back over many intervals.
	for i := 1; c.settling; i++ {
		read(20)
		p.adjust()
		m, _ := p.memory()
		refilled := m.frameBytes >= refillShare*before.frameBytes && m.imageBytes >= refillShare*before.imageBytes
		switch {
		case !c.settling && i < maxSettle && !refilled:
			t.Fatalf("the settle ended after %d intervals with the images at %.0f of %.0f KiB", i, m.imageBytes/1024, before.imageBytes/1024)
		case i == trialSettle && !c.settling:
			t.Fatalf("the settle ended after trialSettle intervals, images refilled to %.0f of %.0f KiB: the test's premise (a longer refill) does not hold", m.imageBytes/1024, before.imageBytes/1024)
		case c.settling && i >= trialSettle && refilled:
			t.Fatalf("interval %d: the tiers have refilled, the settle lasts", i)
		case i > maxSettle:
			t.Fatalf("the settle lasts beyond maxSettle (%d) intervals", maxSettle)
		case !c.settling:
			t.Logf("the settle ended after %d intervals, images at %.0f of %.0f KiB", i, m.imageBytes/1024, before.imageBytes/1024)
		}
	}
	c.mu.Lock()
	c.lastLossU = -1
	c.mu.Unlock()
	read(20)
	p.adjust()
	if c.lastLossU < 0 && c.pend.accesses() == 0 {
		t.Fatal("the interval after the settle: the controller neither decided nor gathered evidence")
	}
}
