package bufferpool

import (
	"math"
	"time"
)

// Trials: leaving the exclusive regime by measurement.
//
// Below α/(1+α) (copiesFloor) pages keep no read image, so every image hit
// promotes a page and demotes another with a compression. Neither the
// ghosts nor the depth histogram see what the copy regime above the floor
// would do (its image hits cost a decompression only), and the hill climb,
// pricing accesses by their wall time, can stay below it where the copy
// regime runs far faster:
//
//   - when the data nearly fits raw (about the cache size), the images use
//     less than their share, nothing evicts them, and the climb has no
//     gradient up: R stayed at 0.25–0.31 with every demotion compressing,
//     at 0.58–0.61× of R = 0.95 (sysbench and JSON events point reads, 4
//     KiB pages, data 0.5× the memory limit, 2 threads);
//   - with more threads than CPUs, every wall time includes the waits for
//     a CPU, which make misses look cheap beside image hits: JSON events
//     at 0.5×, 4 threads, ran at R = 0.05 at 0.77× of R = 0.95, which
//     spent less CPU per transaction (docs/BENCHMARKS.md).
//
// So the controller measures the other regime: after trialPatience
// decisions in a row below the floor with at least half the demotions
// compressing, it moves R to 1 − MinShare, lets the pool settle for
// trialSettle intervals, measures trialMeasure intervals, and keeps the new
// R if that window beats the last trialMeasure intervals measured at about
// the R before (within steadyDrift), themselves at least trialSettle
// intervals after it got there (the two windows alike: settled, adjacent,
// as long; window.beats): by
// accesses a second where the two differ by more than trialMargin and
// neither has an interval without accesses (what a closed loop of requests
// gets, and with more threads than CPUs the only figure that is not
// skewed by the waits for a CPU in every wall time), else by the time per
// access (Stats.TimePerAccess's figure: an open loop serves the same rate
// either way, and then the cheaper accesses win; within trialMargin the
// trial's R is kept). A load that changes its rate by more than
// trialMargin within the three seconds of a trial can decide it; the
// back-offs bound what a wrong verdict costs. A trial that loses goes
// back and waits trialBackoff before the next, twice as long after each
// loss in a row (up to maxTrialBackoff). After a kept trial neither the
// far view (lowerShare) nor the hill climb takes R below the floor for
// trialBackoff, twice as long after each keep in a row (up to
// maxTrialBackoff): the measurement outranks the model that took R down.
// SetShare ends a trial under way and its hold.
//
// Lock rules: called from adjust with the controller's mutex held.

const (
	trialPatience   = 8
	trialSettle     = 10
	trialMeasure    = 10
	trialBackoff    = time.Minute
	maxTrialBackoff = 16 * time.Minute
	trialMargin     = 0.05
)

// window is what the pool measured over some intervals: the cost of its
// accesses by the controller's objective (ns), their number, the wall
// time they took (ns), and how many intervals had no access.
type window struct {
	cost, n, wall float64
	idle          int
}

func (w *window) add(o window) {
	w.cost += o.cost
	w.n += o.n
	w.wall += o.wall
	w.idle += o.idle
}

// perAccess is the objective's time per access, ns.
func (w window) perAccess() float64 { return w.cost / w.n }

// rate is the accesses a second, or 0 without wall time.
func (w window) rate() float64 {
	if w.wall <= 0 {
		return 0
	}
	return w.n / w.wall * 1e9
}

// beats reports whether window w (the trial's) beats before (see the top
// of this file): by rate where the rates differ by more than trialMargin
// and both windows were busy throughout, else by time per access, by
// which a tie keeps the trial's R (it is no more than trialMargin worse).
func (w window) beats(before window) bool {
	if w.n <= 0 {
		return false
	}
	if rb, ra := before.rate(), w.rate(); rb > 0 && ra > 0 && w.idle == 0 && before.idle == 0 {
		switch {
		case ra > rb*(1+trialMargin):
			return true
		case ra < rb*(1-trialMargin):
			return false
		}
	}
	return w.perAccess() <= before.perAccess()*(1+trialMargin)
}

// trial is the state of the exploration (see the top of this file).
type trial struct {
	active    bool
	from      float64 // R before the trial
	before    window  // the steady window at that R
	intervals int     // since the jump
	during    window  // measured in the trial's window
	stuck     int     // decisions in a row in the exclusive regime
	// The steady window: the last trialMeasure intervals with R within
	// steadyDrift of steadyR, once it has held for trialSettle intervals
	// (observeSteady).
	steadyR float64
	steadyN int // intervals at steadyR
	steady  [trialMeasure]window
	// keptUntil: after a kept trial, R does not go below the floor
	// before this; keepFor is how long the next kept trial holds it.
	keptUntil time.Time
	keepFor   time.Duration
	// notBefore: after a lost trial, none before this; backoff is how
	// long the next lost trial waits.
	notBefore time.Time
	backoff   time.Duration
	tried     int64 // trials run
	kept      int64 // those that kept the new R
}

// steadyDrift is how far R may move from where the steady window started
// before the window starts anew: the climb's small steps within a regime
// (it may wander there for good: sysbench point reads at 0.5×, 4 KiB,
// stepped between 0.05 and 0.2 every few intervals and no window filled)
// leave the pool about as it was, a jump or a trial's end does not.
const steadyDrift = 0.05

// observeSteady records an interval measured at share r outside any trial.
func (t *trial) observeSteady(iv window, r float64) {
	if math.Abs(r-t.steadyR) > steadyDrift || iv.wall <= 0 {
		t.steadyR, t.steadyN = r, 0
		if iv.wall <= 0 {
			return
		}
	}
	t.steadyN++
	if t.steadyN > trialSettle {
		t.steady[(t.steadyN-trialSettle-1)%trialMeasure] = iv
	}
}

// steadyWindow returns the steady window, if R has held long enough to
// fill it.
func (t *trial) steadyWindow() (window, bool) {
	var w window
	if t.steadyN < trialSettle+trialMeasure {
		return w, false
	}
	for _, iv := range t.steady {
		w.add(iv)
	}
	return w, true
}

// exclusiveRegime reports whether share r is in the regime the trials
// leave: below the copies floor, with most demotions compressing (not
// where the gate has switched compression off: there images are not
// worth their compressions at any share).
func exclusiveRegime(r, alpha float64, ev evidence) bool {
	return r < copiesFloor(alpha) && ev.demotions > 0 && ev.compressions*2 >= ev.demotions
}

// observeTrial folds one interval's measurement into a running trial. It
// reports whether a trial ran this interval (no decision is taken then)
// and the R to apply: 1 − MinShare while it runs, then that or the R
// before it.
func (c *controller) observeTrial(iv window, now time.Time) (r float64, ran bool) {
	t := &c.trial
	if !t.active {
		return 0, false
	}
	t.intervals++
	if t.intervals > trialSettle {
		t.during.add(iv)
	}
	if t.intervals < trialSettle+trialMeasure {
		return 1 - c.minShare, true
	}
	t.active = false
	c.pend = evidence{}
	c.lastDir, c.step, c.floorHeld = 0, 0.05, 0
	c.gateDem, c.gateHits = 0, 0 // the gate's window starts with the regime kept
	if t.during.beats(t.before) {
		t.kept++
		t.keptUntil = now.Add(t.keepFor)
		t.keepFor = min(2*t.keepFor, maxTrialBackoff)
		t.backoff = trialBackoff
		return 1 - c.minShare, true
	}
	t.notBefore = now.Add(t.backoff)
	t.backoff = min(2*t.backoff, maxTrialBackoff)
	t.keepFor = trialBackoff
	return t.from, true
}

// holdsFloor reports whether R may not go to r: a trial kept the copy
// regime less than its hold ago, and r is below its floor.
func (t *trial) holdsFloor(r, alpha float64, now time.Time) bool {
	return r < copiesFloor(alpha) && t.holding(now)
}

// holding reports whether a kept trial's hold on the floor lasts at now.
func (t *trial) holding(now time.Time) bool { return now.Before(t.keptUntil) }

// end ends a trial under way and its hold (SetShare: the user's R).
func (t *trial) end() {
	t.active = false
	t.keptUntil = time.Time{}
}

// considerTrial is called after a decision from prev to next on evidence
// ev: it counts the decisions in a row in the exclusive regime and starts
// a trial when there have been enough and the steady window is full. It
// reports the R to apply.
func (c *controller) considerTrial(prev, next, alpha float64, ev evidence, now time.Time) float64 {
	t := &c.trial
	if !exclusiveRegime(math.Max(prev, next), alpha, ev) {
		t.stuck = 0
		return next
	}
	t.stuck++
	before, full := t.steadyWindow()
	if t.stuck < trialPatience || now.Before(t.notBefore) || !full || before.n == 0 {
		return next
	}
	t.active, t.from, t.before = true, next, before
	c.gateDem, c.gateHits = 0, 0 // the gate's window starts with the new regime
	t.intervals, t.during = 0, window{}
	t.stuck, t.steadyN = 0, 0
	t.tried++
	c.adjustments++ // counted as a step (ControllerSteps); its end is not
	return 1 - c.minShare
}
