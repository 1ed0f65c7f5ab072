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
// for the page cleaner (20–40 µs an image hit in most intervals, 140–380
// µs in the one each jump was decided on), and a miss on the write path
// defers its commit, which costs the writes about twice the CPU the pool
// prices the miss at. The far view jumped from R 0.45 to 0.05 every 3–5
// s, the climb took R back up, and auto ran at 0.82–0.88× of R 0.95,
// which has no misses there (docs/BENCHMARKS.md, twenty-eighth session).
// Where the writes' data is 1–2× the memory the same jumps were right
// (R 0.05 with compressions switched off by the gate ran as fast as or
// faster than any fixed R). Only a measurement tells the two apart.
//
// So in auto mode a jump is a trial of its own arm (armJump): the pool
// runs at the jump's R for trialSettle intervals, measures trialMeasure
// intervals, and keeps the jump if that window beats the recent window
// (the last trialMeasure intervals outside any trial, hold or settle, at
// whatever R the climb had them: the regime the jump leaves) by
// window.beats (operations a second where the database counts them;
// within trialMargin, the time per access, where the far view's
// prediction decides the tie). Unlike the other arms, the gate judges
// during a jump's trial: the regime a jump leads to includes what the
// gate then does (compressions off at R 0.05 for writes at 1–2×). A jump
// that loses goes back to the R before it, with compressions as they
// were, settles as a lost trial does, and the far view waits out the
// jump arm's back-off (a minute, doubling with each loss in a row, up to
// maxTrialBackoff) before it jumps again; the climb acts meanwhile. A
// jump with no recent window to be judged against (the first intervals
// after the warm-up, a trial or a settle) waits for one. The hill climb's
// own steps are not measured so: each moves R by at most maxStep, which
// the next decisions correct.
//
// Lock rules: called from adjust with the controller's mutex held.

// observeRecent records an interval measured outside any trial, hold or
// settle in the recent window.
func (t *trial) observeRecent(iv window) {
	t.recent[t.recentN%trialMeasure] = iv
	t.recentN++
}

// recentWindow returns the recent window, if it has trialMeasure
// intervals.
func (t *trial) recentWindow() (window, bool) {
	var w window
	if t.recentN < trialMeasure {
		return w, false
	}
	for _, iv := range t.recent {
		w.add(iv)
	}
	return w, w.n > 0
}

// mayJump reports whether the far view may jump at now: the jump arm is
// not waiting out the back-off of a lost trial.
func (t *trial) mayJump(now time.Time) bool {
	return !now.Before(t.arms[armJump].notBefore)
}

// startJump starts the trial of a jump of the far view from R from to R
// to, with demotions compressing or not, and returns to. The climb has
// made sure there is a recent window (climb).
func (c *controller) startJump(from, to float64, compressing bool) float64 {
	before, _ := c.trial.recentWindow()
	c.trial.jumpCompressFrom = compressing
	return c.beginTrial(armJump, from, to, before, false)
}

// duringJump is run for each interval of a jump's trial, after it was
// observed (observeTrial), with the interval's evidence: the gate judges
// while the trial runs, and if it went back, compressions are put back as
// they were when it started.
func (c *controller) duringJump(p *Pool, mem memState, images int, ev evidence, skipped, hitsOnCompressed int64) {
	switch {
	case c.trial.active:
		c.gate(p, mem, images, ev, skipped, hitsOnCompressed)
	case c.settling:
		p.compressing.Store(c.trial.jumpCompressFrom)
	}
}
