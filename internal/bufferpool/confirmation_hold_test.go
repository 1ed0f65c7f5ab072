package bufferpool

import (
	"testing"
	"time"
)

// TestPendingConfirmationHoldsTheClimb: after a first frames win that
// needs confirming, where document 000's model said images do not pay,
// decisions that would move R (up or down) leave it, the climb's step and
// the step counts where they were, and the climb counts as stalled, until
// the confirming trial starts from the first win's R, trialPatience
// decisions later. Given its fresh step after the trial's return, the
// climb took R about 0.05 up and started its stall count anew, or 0.063
// down, more than steadyDrift from the first win; either dropped the
// confirmation (docs/BENCHMARKS.md, twenty-fifth and twenty-sixth
// sessions). The hold is bounded (maxHoldDecisions), absent where images
// paid at the first win, and a confirmation dropped as its trial would
// start does not skip the frames arm's back-off.
func TestPendingConfirmationHoldsTheClimb(t *testing.T) {
	const alpha = 0.36
	mem := memState{frameBytes: 2 << 20, imageBytes: 2 << 20, resident: 4 << 20, avail: 4 << 20, budget: 4 << 20}
	borderline := borderlineControllers(t, alpha, 47*time.Microsecond, 90*time.Microsecond, mem)
	ev := evidence{hitsU: 400, hitsC: 700, misses: 1000, frameEvictions: 100, demotions: 100, depth: depthAt(1.5, 700)}
	up, down := ghosts(0, 400), ghosts(400, 0) // the climb's evidence: clearly up, clearly down
	now := time.Now()
	const from = 0.52
	pending := func(steadyAt float64) *controller {
		c := borderline()
		f := &c.trial.arms[armFrames]
		f.confirming, f.confirmFrom, f.confirmBefore = true, from, beforeWin
		f.holds, f.held = c.imagesDoNotPay(alpha), 0
		f.notBefore = now.Add(time.Minute) // the back-off the first win set
		c.upStalled, c.upStallFrom = 0, from
		c.step, c.lastDir = 0.05, 0 // the climb as a trial's return leaves it
		for i := 0; i < trialSettle+trialMeasure; i++ {
			c.trial.observeSteady(beforeWin, steadyAt)
		}
		return c
	}

	// No confirmation pending: the evidence steps R either way.
	c := borderline()
	c.step = 0.05
	c.pend = up
	if r := c.climb(from, from, alpha, mem); r <= from {
		t.Fatalf("no confirmation pending: R %.3f after evidence for more images, from %.3f", r, from)
	}
	c.pend = down
	if r := c.climb(from, from, alpha, mem); r >= from {
		t.Fatalf("no confirmation pending: R %.3f after evidence for fewer images, from %.3f", r, from)
	}

	c = pending(from)
	r := from
	for i := 0; i < trialPatience && !c.trial.active; i++ {
		c.pend = up
		if i%2 == 1 {
			c.pend = down
		}
		steps, step := c.adjustments, c.step
		next := c.climb(r, r, alpha, mem)
		if next != r || c.adjustments != steps || c.step != step {
			t.Fatalf("decision %d with a confirmation pending: R %.3f → %.3f, steps %d → %d, step %.3f → %.3f",
				i, r, next, steps, c.adjustments, step, c.step)
		}
		c.trial.observeSteady(beforeWin, next)
		r = c.considerTrial(r, next, alpha, ev, c.wantedUp, true, now)
	}
	if !c.trial.active || c.trial.arm != armFrames || !c.trial.arms[armFrames].confirming || c.trial.from != from {
		t.Fatalf("after %d decisions: trial active %v, arm %v, confirming %v, from %.3f; want the frames arm's confirming trial from %.3f",
			trialPatience, c.trial.active, c.trial.arm, c.trial.arms[armFrames].confirming, c.trial.from, from)
	}

	// The hold ends after maxHoldDecisions decisions, and the confirmation
	// with it.
	c = pending(from)
	for i := 0; i < maxHoldDecisions; i++ {
		c.pend = up
		if r := c.climb(from, from, alpha, mem); r != from {
			t.Fatalf("held decision %d: R %.3f", i, r)
		}
	}
	c.pend = up
	if r := c.climb(from, from, alpha, mem); r <= from || c.trial.arms[armFrames].confirming {
		t.Fatalf("after %d held decisions: R %.3f, confirming %v; want a step and no confirmation", maxHoldDecisions, r, c.trial.arms[armFrames].confirming)
	}

	// Images paid when the first win came: no hold.
	c = pending(from)
	c.trial.arms[armFrames].holds = false
	c.pend = up
	if r := c.climb(from, from, alpha, mem); r <= from {
		t.Fatalf("images paid at the first win: R %.3f, held", r)
	}

	// R moved away from the first win (steady there since): the
	// confirmation is dropped as the trial would start, and the trial,
	// a first one again, waits out the back-off.
	moved := from + 0.1
	c = pending(moved)
	for i := 0; i < trialPatience; i++ {
		c.wantedUp = false
		c.trial.observeSteady(beforeWin, moved)
		c.considerTrial(moved, moved, alpha, ev, false, true, now)
	}
	if c.trial.active || c.trial.arms[armFrames].confirming {
		t.Fatalf("R %.2f from the first win: trial active %v, confirming %v; want neither before the back-off",
			moved-from, c.trial.active, c.trial.arms[armFrames].confirming)
	}
}
