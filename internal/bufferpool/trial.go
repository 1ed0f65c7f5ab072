package bufferpool

import (
	"math"
	"time"
)

// Trials: leaving the exclusive regime by measurement.
//
// Below α/(1+α) (copiesFloor) pages keep no read image, so every image hit
// promotes a page and demotes another with a compression. When the data
// nearly fits (about the cache size raw), the images then use less than
// their share, nothing evicts them, and the hill climb has no gradient up
// (the compressed ghost sees nothing) while its loss side, pricing misses
// at their wall time, holds it from going down: R stayed at 0.25–0.31 with
// every demotion compressing, at 0.58–0.61× of R = 0.95 (sysbench and
// JSON events point reads, 4 KiB pages, data 0.5× the memory limit;
// docs/BENCHMARKS.md). Neither the ghosts nor the depth histogram see what
// the other regime would do, so the controller measures it: after
// trialPatience decisions in a row in that state without a step, it moves
// R to 1 − MinShare, lets the pool settle for trialSettle intervals,
// measures the time per access (Stats.TimePerAccess's per-interval figure)
// over trialMeasure intervals, and keeps the new R if that is no more than
// 5% worse than the time measured over every interval of the stuck
// decisions, or goes back and does not try again for trialBackoff. After a
// kept trial the far view (lowerShare) does not jump below the floor for
// trialBackoff: it prices the image hits it would move with the copy
// regime's time, which the exclusive regime does not have. SetShare ends a
// trial under way.
//
// Lock rules: called from adjust with the controller's mutex held.

const (
	trialPatience = 8
	trialSettle   = 10
	trialMeasure  = 10
	trialBackoff  = time.Minute
	trialMargin   = 0.05
)

// trial is the state of the exploration (see the top of this file).
type trial struct {
	active            bool
	from              float64   // R before the trial
	before            float64   // time per access before, ns
	intervals         int       // since the jump
	cost, n           float64   // measured during the trial's window
	stuck             int       // decisions in a row in the exclusive state without a step
	stuckCost, stuckN float64   // time measured while stuck
	sinceCost, sinceN float64   // time measured since the last decision (every interval)
	keptUntil         time.Time // after a kept trial, no far-view jump below the floor before this
	notBefore         time.Time
	tried, kept       int64 // trials run, and those that kept the new R
}

// exclusiveStuck reports whether the controller sits in the state the
// trials leave: R below the copies floor, the images under their share and
// not evicted, and most demotions compressing.
func exclusiveStuck(r, usage, alpha float64, ev evidence) bool {
	return r < copiesFloor(alpha) && usage < r-0.02 && ev.imageEvictions == 0 &&
		ev.demotions > 0 && ev.compressions*2 >= ev.demotions
}

// observeTrial folds one interval's measured cost (ns over n accesses)
// into a running trial. It reports whether a trial ran this interval (no
// decision is taken then) and the R to apply: 1 − MinShare while it runs,
// then that or the R before it.
func (c *controller) observeTrial(cost, n float64, now time.Time) (r float64, ran bool) {
	t := &c.trial
	if !t.active {
		return 0, false
	}
	t.intervals++
	if t.intervals > trialSettle {
		t.cost += cost
		t.n += n
	}
	if t.intervals < trialSettle+trialMeasure {
		return 1 - c.minShare, true
	}
	t.active = false
	c.pend = evidence{}
	c.lastDir, c.step, c.floorHeld = 0, 0.05, 0
	if t.n > 0 && t.cost/t.n <= t.before*(1+trialMargin) {
		t.kept++
		t.keptUntil = now.Add(trialBackoff)
		return 1 - c.minShare, true
	}
	t.notBefore = now.Add(trialBackoff)
	return t.from, true
}

// holdsFloor reports whether a far-view jump to r must wait: a trial kept
// the copy-keeping regime less than trialBackoff ago, and r is below its
// floor (the far view prices the hits it would move with that regime's
// image-hit time, not the exclusive regime's).
func (t *trial) holdsFloor(r, alpha float64, now time.Time) bool {
	return r < copiesFloor(alpha) && now.Before(t.keptUntil)
}

// considerTrial is called after a decision: it counts decisions in the
// stuck state that took no step, with the time measured over every
// interval meanwhile, and starts a trial when there have been enough. It
// reports the R to apply.
func (c *controller) considerTrial(prev, next, usage, alpha float64, ev evidence, now time.Time) float64 {
	t := &c.trial
	cost, n := t.sinceCost, t.sinceN
	t.sinceCost, t.sinceN = 0, 0
	if next != prev || !exclusiveStuck(prev, usage, alpha, ev) {
		t.stuck, t.stuckCost, t.stuckN = 0, 0, 0
		return next
	}
	t.stuck++
	t.stuckCost += cost
	t.stuckN += n
	if t.stuck < trialPatience || now.Before(t.notBefore) || t.stuckN == 0 {
		return next
	}
	t.active, t.from, t.before = true, prev, t.stuckCost/t.stuckN
	c.gateDem, c.gateHits = 0, 0 // the gate's window starts with the new regime
	t.intervals, t.cost, t.n = 0, 0, 0
	t.stuck, t.stuckCost, t.stuckN = 0, 0, 0
	t.tried++
	c.adjustments++ // counted as a step (ControllerSteps); its end is not
	return math.Max(prev, 1-c.minShare)
}
