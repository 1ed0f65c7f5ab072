package bufferpool

import "time"

// A far-view jump, measured.
//
// The far view (lowerShare, depth.go) predicts from the depth histogram
// that frames much larger would serve the hot set, and takes R down at
// once. Its prediction prices image hits and misses by what the pool
// measures of them, and two things it cannot see made it wrong on cached
// writes (sysbench oltp_write_only, data 0.5× the memory, 4 KiB pages):
// the whole time of an image hit spikes for an interval when loads wait
// for the page cleaner (the jumps to R ≤ 0.3 were decided at 15–141 µs an
// image hit, half of them above the 40 µs median of all decisions), and a
// miss on the write path defers its commit, which costs the writes about
// twice the CPU the pool prices the miss at. The far view jumped from R 0.45 to 0.05 every
// 3–5 s, the climb took R back up, and auto ran at 0.82–0.88× of R 0.95,
// which has no misses there (docs/BENCHMARKS.md, twenty-eighth session).
// Where the writes' data is 1–2× the memory the same jumps were right
// (R 0.05 with compressions switched off by the gate ran as fast as or
// faster than any fixed R). Only a measurement tells the two apart.
//
// So in auto mode a jump is a trial of its own arm (armJump): the pool
// runs at the jump's R for trialSettle intervals, measures trialMeasure
// intervals, and keeps the jump only if that window clearly beats
// (window.clearlyBeats: operations a second where the database counts
// them, by more than trialMargin; else a time per access lower by more
// than trialMargin) the recent window: the trialMeasure intervals before
// the one the jump was decided on (that interval is left out: many jumps
// were decided on intervals whose costs spiked), outside any trial,
// kept frames trial's hold or settle, at whatever R the climb had them.
// A tie goes back: the far view's prediction is what is in doubt. Unlike
// the other arms, the gate judges during a jump's settle (in all but its
// last interval): the regime a jump leads to includes what the gate then
// does (compressions off at R 0.05 for writes at 1–2×, within 0.2–0.5 s
// of the jump); during the measured window it does not, so that the
// window measures one regime. It switches once at most per jump: with few
// images left after a jump its windows are short, and on cached writes it
// switched 2–6 times within a settle, so that the window measured
// whichever way it had switched last.
// A jump that loses goes back to the R before it, with compressions as
// they were, settles as a lost trial does, and the far view waits out the
// jump arm's back-off (a minute, doubling with each loss in a row, up to
// maxTrialBackoff) before it jumps again to that R or above; the climb
// acts meanwhile. A jump further down is still measured: a loss says
// nothing of frames larger still (cached writes at 2× the memory: a jump
// from 0.55 to 0.35 tied and went back, and its back-off kept the far
// view from the jump to 0.05, which wins there by a quarter or more). A kept
// jump is held like a kept copy trial (trialBackoff, twice as long with
// each keep in a row, up to maxTrialBackoff), from above only: the climb
// raises R no higher than the jump's meanwhile (a kept jump that held
// nothing was undone by the climb within seconds on cached writes at 2×
// the memory, and the far view's next jump was again a shallow one, R
// ending at 0.54 where base's unmeasured jump to 0.05 ran 1.3× as fast);
// the climb may lower R and the far view jump further once the recent
// window has refilled, but the copy arm waits for the hold's end
// (mayPay: 20 of 21 copy trials that followed kept jumps lost, 19 of
// them by 25–62%, on cached writes at 1–2× and special-key reads at 1×;
// a copy trial kept after the hold ends the jump arm's keeps in a row).
// A jump with no recent window to be judged against (the first intervals
// after the warm-up, a trial, a kept frames trial's hold or a settle)
// waits for one. The hill climb's own steps are not measured so: each
// moves R by at most maxStep, which the next decisions correct.
//
// Lock rules: called from adjust with the controller's mutex held.

// observeRecent records an interval measured outside any trial, kept
// frames trial's hold or settle among the recent intervals.
func (t *trial) observeRecent(iv window) {
	t.recent[t.recentN%len(t.recent)] = iv
	t.recentN++
}

// recentWindow returns the recent window, the trialMeasure intervals
// before the newest recorded, if there are as many.
func (t *trial) recentWindow() (window, bool) {
	var w window
	if t.recentN < len(t.recent) {
		return w, false
	}
	newest := (t.recentN - 1) % len(t.recent)
	for i, iv := range t.recent {
		if i != newest {
			w.add(iv)
		}
	}
	return w, w.n > 0
}

// holdsJump reports whether a kept jump's hold lasts at now: the climb
// raises R no higher than the jump's (climb), and the copy arm is not
// tried (mayPay).
func (t *trial) holdsJump(now time.Time) bool { return now.Before(t.arms[armJump].keptUntil) }

// mayJump reports whether the far view may jump to R to at now: the jump
// arm is not waiting out the back-off of a lost trial, or to is more than
// steadyDrift below the R of the jump that lost (a loss says nothing of
// frames larger still).
func (t *trial) mayJump(to float64, now time.Time) bool {
	return !now.Before(t.arms[armJump].notBefore) || to < t.jumpLostAt-steadyDrift
}

// startJump starts the trial of a jump of the far view from R from to R
// to, with demotions compressing or not, and returns to. The climb has
// made sure there is a recent window (climb).
func (c *controller) startJump(from, to float64, compressing bool) float64 {
	before, _ := c.trial.recentWindow()
	c.trial.jumpCompressFrom, c.trial.jumpGateSwitched = compressing, false
	return c.beginTrial(armJump, from, to, before, false)
}

// duringJump is run for each interval of a jump's trial, after it was
// observed (observeTrial, which counts it), with the interval's evidence:
// the gate judges in the trial's first trialSettle − 1 intervals (a switch
// in the last would take effect in the measured window) until it has
// switched once, and if the trial went back, compressions are put back as
// they were when it started.
func (c *controller) duringJump(p *Pool, mem memState, images int, ev evidence, skipped, hitsOnCompressed int64) {
	t := &c.trial
	switch {
	case t.active && t.intervals < trialSettle && !t.jumpGateSwitched:
		was := p.compressing.Load()
		c.gate(p, mem, images, ev, skipped, hitsOnCompressed)
		t.jumpGateSwitched = p.compressing.Load() != was
	case !c.trial.active && c.settling && p.compressing.Load() != c.trial.jumpCompressFrom:
		p.compressing.Store(c.trial.jumpCompressFrom)
		c.log.Debug("bufferpool: a lost jump puts compressing demotions back", "compressing", c.trial.jumpCompressFrom)
	}
}
