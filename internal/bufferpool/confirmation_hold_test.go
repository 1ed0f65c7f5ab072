package bufferpool

import (
	"testing"
	"time"
)

// TestPendingConfirmationHoldsTheClimb: after a first frames win that
// needs confirming, where document 000's model says images do not pay,
// the climb takes no step, up or down, and counts as stalled until the
// confirming trial starts, trialPatience decisions later, from the first
// win's R. Given its fresh step after the trial's return, the climb took
// R 0.05 up and started its stall count anew, or 0.063 down, more than
// steadyDrift from the first win; either dropped the confirmation
// (docs/BENCHMARKS.md, twenty-fifth and twenty-sixth sessions). Where
// images pay, the climb is not held.
func TestPendingConfirmationHoldsTheClimb(t *testing.T) {
	const alpha = 0.36
	mem := memState{frameBytes: 2 << 20, imageBytes: 2 << 20, resident: 4 << 20, avail: 4 << 20, budget: 4 << 20}
	borderline := borderlineControllers(t, alpha, 47*time.Microsecond, 90*time.Microsecond, mem)
	ev := evidence{hitsU: 400, hitsC: 700, misses: 1000, frameEvictions: 100, demotions: 100, depth: depthAt(1.5, 700)}
	now := time.Now()
	const from, stepped, down = 0.52, 0.572, 0.457

	pending := func(c *controller) *controller {
		f := &c.trial.arms[armFrames]
		f.confirming, f.confirmFrom, f.confirmBefore = true, from, beforeWin
		c.upStalled, c.upStallFrom = 0, from // the count started anew after the return
		for i := 0; i < trialSettle+trialMeasure; i++ {
			c.trial.observeSteady(beforeWin, from)
		}
		return c
	}
	c := pending(borderline())
	r := from
	for i := 0; i < trialPatience && !c.trial.active; i++ {
		c.wantedUp = i%2 == 0
		to := stepped
		if !c.wantedUp {
			to = down
		}
		next := c.holdForConfirmation(r, to, alpha)
		if next != r {
			t.Fatalf("decision %d: R stepped from %.3f to %.3f while a confirmation is pending", i, r, next)
		}
		c.countStall(r, next)
		c.trial.observeSteady(beforeWin, next)
		r = c.considerTrial(r, next, alpha, ev, c.wantedUp, true, now)
	}
	if !c.trial.active || c.trial.arm != armFrames || !c.trial.arms[armFrames].confirming {
		t.Fatalf("after %d decisions: trial active %v, arm %v, confirming %v; want the frames arm's confirming trial",
			trialPatience, c.trial.active, c.trial.arm, c.trial.arms[armFrames].confirming)
	}
	if c.trial.from != from {
		t.Fatalf("the confirming trial starts from R %.3f, want the first win's %.3f", c.trial.from, from)
	}

	// No confirmation pending: the climb steps.
	c = borderline()
	if next := c.holdForConfirmation(from, stepped, alpha); next != stepped {
		t.Fatalf("no confirmation pending: R %.3f after a step to %.3f", next, stepped)
	}
	// Images pay by the model (reads 10× as long as a decompression): the
	// climb is not held even with a confirmation pending.
	c = pending(testController())
	c.tDisk.v, c.tDecom.v, c.mem = float64(500*time.Microsecond), float64(50*time.Microsecond), mem
	if c.imagesDoNotPay(alpha) {
		t.Fatal("the costs do not make images pay")
	}
	if next := c.holdForConfirmation(from, stepped, alpha); next != stepped {
		t.Fatalf("images pay: R %.3f after a step to %.3f with a confirmation pending", next, stepped)
	}
}
