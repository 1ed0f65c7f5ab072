package bufferpool

import (
	"math"
	"time"
)

// Trials: leaving a regime by measurement.
//
// The hill climb prices accesses by their wall time and sees only what its
// ghosts and depth histogram show, a tenth of the budget either way. Two
// other regimes are out of its sight, and the controller measures them
// instead (each an arm; a third arm measures the far view's jumps, with
// rules of its own: jump.go):
//
//   - The copy arm (R at the ceiling, 1 − MinShare unless the inner pages
//     need more frames: innerCeiling; pages keep their read images). Below
//     α/(1+α) (copiesFloor) pages keep no read image, so every image hit
//     promotes a page and demotes another with a compression; what the
//     copy regime above the floor would do (its image hits cost a
//     decompression only) is out of sight. The climb stayed below it
//     where the copy regime ran far faster: when the data nearly fits raw
//     (the images use less than their share, nothing evicts them, no
//     gradient up; 0.58–0.61× of R = 0.95, 4 KiB pages, data 0.5× the
//     memory limit), and with more threads than CPUs, where every wall
//     time includes the waits for a CPU and misses look cheap beside image
//     hits (JSON events at 0.5×, 4 threads: R = 0.05 at 0.77× of R = 0.95).
//   - The frames arm (R = MinShare and no compressing demotion: frames
//     alone). A miss's wall time is not the idle wait the objective
//     treats it as (on this VM a 4 KiB direct read spends 21 µs of CPU of
//     its 41 µs) and an image hit is all CPU, so where the CPUs are the
//     bottleneck the climb kept images that cost more than they saved:
//     R 0.8–0.9 at 4× and 8× the memory (4 KiB) where R = 0 ran up to
//     1.18× faster, R 0.95 at 0.5× with 16 KiB pages where R = 0 ran
//     1.4× faster (docs/BENCHMARKS.md).
//
// An arm is tried after trialPatience decisions in a row in which it may
// pay (mayPay): the copy arm below the floor with at least half the
// demotions compressing (exclusiveRegime), or at the floor or within
// steadyDrift above it where the compressed ghost's misses are at least a
// quarter of a percent of the accesses (nearFloorMisses), or with
// compressing demotions off where images would serve misses and pay
// (copyMayPay), but never within a kept jump's hold (jump.go); the frames
// arm wherever images serve at least a tenth of the accesses
// (imagesServe), the pool is not
// already close to frames alone, and the climb did not want R up below
// the maximum R (a climb still raising R is still finding where images
// pay: a cold pool read uniformly, data twice the budget, had its frames
// arm beat R 0.37 on the climb's way up to 0.95, which reads 1.3× faster
// than frames alone; at the maximum it has found them) unless document
// 000's model says frames alone win (framesByModel), or says images do
// not pay (imagesDoNotPay, without the margin) and the climb has wanted
// R up in trialPatience decisions, not necessarily in a row, without
// showing it is finding (stalled in its noise: countStall), and, unless
// the model says either, the depth histogram does not predict that
// frames alone would miss far more (framesAddMisses: more than twice the
// misses plus 2% of the accesses).
// When both reach their patience in the same decision and neither waits
// out a back-off, the copy arm goes first.
// The controller moves to the arm's setting, lets the pool settle for
// trialSettle intervals, measures trialMeasure intervals, and keeps the
// arm if that window beats the last trialMeasure intervals measured at
// about the R before (within steadyDrift, with demotions compressing or
// not as then), themselves at least trialSettle intervals after it got
// there (the two windows alike: settled, adjacent, as long;
// window.beats): by accesses a second (by the user's operations a second
// where it counts them: Options.Progress) where the two differ by more
// than trialMargin and neither has an interval without accesses (what a closed
// loop of requests gets, and with the CPUs busy the only figure not
// skewed by the waits for a CPU in every wall time), else by the time per
// access (Stats.TimePerAccess's figure: an open loop serves the same rate
// either way, and then the cheaper accesses win). Where the two are
// within trialMargin of each other the copy arm is kept, the frames arm
// is not (clearlyBeats: its hold stops the climb, which must not be held
// where it was still finding its R). A copy trial from compressions off
// starts from an empty image tier, which fills only as pages miss, so it
// is kept on a tie too (judged strictly, such trials lost the way out of
// the trap copyMayPay describes in 1 of 8 cold-pool runs beside two busy
// loops); the frames keep that would leave the pool there pushes the
// copy arm's next trial past its hold and a back-off, so that the two do
// not undo each other at every turn. Unless the model said frames alone
// win when its trial started (framesByModel), the frames arm must also
// win twice in a row, the second time in a trial of its own
// (trialPatience decisions and a new steady window after the first,
// which goes back as a loss does and sets the back-off without doubling
// it, which the confirming trial alone may ignore), from about the same R
// (within steadyDrift), with no other trial and no decision in which the
// arm did not qualify between them once the pool has settled (the steady
// window full), and beating the window before the first as well as its
// own (which may be the refill after the first); where the model said
// images do not pay at the first win, R is held meanwhile (holdsR). One
// window each way is at the mercy of a load that changes within it, and
// a cold pool read uniformly beside two busy loops on two cores (data
// twice the budget, the climb at R 0.92, 5 ms intervals) kept frames
// alone after one win in 2 of 18 runs and ended at R 0.05 with twice the
// misses. A load that
// changes its rate by more than trialMargin within the two seconds of a
// trial can still decide it; the back-offs bound what a wrong verdict
// costs.
//
// A lost trial goes back (R, and whether demotions compressed), nothing is
// decided until the refill is over (both tiers back to refillShare of the
// bytes they held before it, or its misses and image hits back to their
// shares before it), and for at least trialSettle and at most maxSettle
// intervals with accesses (settle: the refill's misses are not evidence),
// and its arm waits trialBackoff before the next, twice as long after
// each loss in a row (up to maxTrialBackoff). A kept arm is held for trialBackoff, twice
// as long after each keep of it in a row (up to maxTrialBackoff): the
// copy arm by keeping the far view (lowerShare) and the hill climb from
// taking R below the floor, or, after a clear win (clearlyBeats), from
// lowering R at all (they may still raise it, and the frames arm may be
// tried; holding only the floor let the climb undo a copy trial that had
// won by a fifth on cached writes, where R 0.95 holds an image of every
// page and the floor does not; a tie within trialMargin says too little
// to freeze R for a whole hold), the frames arm by taking no decision at all and leaving
// the gate alone (compressing demotions stay off). When the frames hold
// ends, demotions stay off and R at MinShare, where the climb cannot move
// (no image is made, so no image gains or loses): the ways out are the
// gate's off branch, bringing compressions back when the misses they
// would serve are worth 1.25× what they cost, and the copy arm
// (copyMayPay); from there the climb acts again, and
// the frames arm after them, its next keep held twice as long. The
// measurement outranks the model that ran into it, for a while. No
// decision is taken and the gate judges nothing while a trial runs (its
// windows start anew at both ends; a jump's trial lets the gate judge in
// its settle: jump.go). A trial costs its trialSettle +
// trialMeasure intervals (2 s by default) and, when it goes back, the
// refill after it: at most once per back-off of the copy arm, twice (a
// first win, then a lost confirmation) of the frames arm.
// SetShare ends a trial under way and every hold.
//
// Lock rules: called from adjust with the controller's mutex held.

const (
	trialPatience = 8
	trialSettle   = 10
	// maxSettle bounds the settle after a trial went back (settle):
	// a tier may not refill at all when the load changed meanwhile.
	maxSettle = 100
	// refillShare: a tier is back when it holds this share of its bytes
	// before the trial.
	refillShare     = 0.9
	trialMeasure    = 10
	trialBackoff    = time.Minute
	maxTrialBackoff = 16 * time.Minute
	trialMargin     = 0.05
	// imageServeShare: the frames arm may pay where image hits are at
	// least this share of the accesses.
	imageServeShare = 0.10
)

// window is what the pool measured over some intervals: the cost of its
// accesses by the controller's objective (ns), their number, the wall
// time they took (ns), how many intervals had no access, and how many
// accesses missed or hit an image.
type window struct {
	cost, n, wall float64
	// work is what the pool's user completed (Options.Progress), which
	// rate counts instead of the accesses where progress is set.
	work     float64
	progress bool
	idle     int
	// misses and hitsC count its accesses that missed and that hit an
	// image (what a return waits for: settle).
	misses, hitsC float64
}

func (w *window) add(o window) {
	w.cost += o.cost
	w.n += o.n
	w.work += o.work
	w.progress = w.progress || o.progress
	w.wall += o.wall
	w.idle += o.idle
	w.misses += o.misses
	w.hitsC += o.hitsC
}

// perAccess is the objective's time per access, ns.
func (w window) perAccess() float64 { return w.cost / w.n }

// rate is the work a second (Options.Progress's, else the accesses), or 0
// without wall time.
func (w window) rate() float64 {
	if w.wall <= 0 {
		return 0
	}
	if w.progress {
		return w.work / w.wall * 1e9
	}
	return w.n / w.wall * 1e9
}

// byRate compares the rates of w (the trial's) and before where both
// windows were busy throughout and the rates differ by more than
// trialMargin: decided, and whether w's is the higher.
func (w window) byRate(before window) (higher, decided bool) {
	rb, ra := before.rate(), w.rate()
	if rb <= 0 || ra <= 0 || w.idle != 0 || before.idle != 0 {
		return false, false
	}
	switch {
	case ra > rb*(1+trialMargin):
		return true, true
	case ra < rb*(1-trialMargin):
		return false, true
	}
	return false, false
}

// beats reports whether window w (the trial's) beats before (see the top
// of this file): by rate (byRate), else by time per access, by which a
// tie keeps the trial's R (it is no more than trialMargin worse).
func (w window) beats(before window) bool {
	if w.n <= 0 {
		return false
	}
	if higher, decided := w.byRate(before); decided {
		return higher
	}
	return w.perAccess() <= before.perAccess()*(1+trialMargin)
}

// clearlyBeats is beats without the tie: by rate, else by a time per
// access lower by more than trialMargin. The frames arm, whose hold stops
// the climb and the gate, must win so (a cold pool read uniformly, data
// twice the budget, the climb at R 0.37 with compressions off on its way
// to 0.95: frames alone tied there, were kept, and held the pool at 1.3×
// R = 0.95's time per read).
func (w window) clearlyBeats(before window) bool {
	if w.n <= 0 {
		return false
	}
	if higher, decided := w.byRate(before); decided {
		return higher
	}
	return w.perAccess() < before.perAccess()*(1-trialMargin)
}

// armKind names a regime a trial measures (see the top of this file).
type armKind int

func (a armKind) String() string {
	switch a {
	case armFrames:
		return "frames"
	case armJump:
		return "jump"
	}
	return "copy"
}

const (
	armCopy   armKind = iota // R at the ceiling (innerCeiling): pages keep their read images
	armFrames                // R = MinShare, no compressing demotion: frames alone
	armJump                  // the R the far view jumped to (jump.go)
	numArms
)

// arm is what the trials of one arm left: when it may be tried again, and
// how long a keep holds it.
type arm struct {
	// notBefore: after a lost trial, none before this; backoff is how
	// long the next lost trial waits.
	notBefore time.Time
	backoff   time.Duration
	// keptUntil: after a kept trial, its regime holds until this; keepFor
	// is how long the next kept trial holds it.
	keptUntil time.Time
	keepFor   time.Duration
	// clear: the copy arm's last keep was a clear win (clearlyBeats), and
	// its hold keeps R where the trial measured it, not only the floor.
	clear bool
	tried int64 // trials run
	kept  int64 // those that kept the arm
	// confirming: the last trial of this (frames) arm won, from R
	// confirmFrom against confirmBefore, and the next must win too, from
	// about the same R and against both windows, before the arm is kept
	// (see the top of this file).
	confirming    bool
	confirmFrom   float64
	confirmBefore window
	// holds: R is held while the confirmation is pending (the model said
	// images do not pay at the first win: holdsR), for at most
	// maxHoldDecisions decisions (held counts them).
	holds bool
	held  int
}

// tried is the number of trials started, of every arm.
func (t *trial) tried() (n int64) {
	for _, a := range t.arms {
		n += a.tried
	}
	return n
}

// lost records a trial of the arm that lost at now.
func (a *arm) lost(now time.Time) {
	a.notBefore = now.Add(a.backoff)
	a.backoff = min(2*a.backoff, maxTrialBackoff)
	a.keepFor = trialBackoff
}

// won records a trial of the arm kept at now.
func (a *arm) won(now time.Time) {
	a.kept++
	a.keptUntil = now.Add(a.keepFor)
	a.keepFor = min(2*a.keepFor, maxTrialBackoff)
	a.backoff = trialBackoff
}

// trial is the state of the exploration (see the top of this file).
type trial struct {
	active    bool
	arm       armKind // the arm under trial
	from      float64 // R before the trial
	share     float64 // the arm's R, fixed when the trial starts
	before    window  // the steady window at that R
	intervals int     // since the jump
	during    window  // measured in the trial's window
	// fromFrames, fromImages, fromMisses, fromNotFrames: what a return
	// waits for (refillFrom, settle).
	fromFrames, fromImages, fromMisses, fromNotFrames float64
	// stuck counts, per arm, the decisions in a row in which it may pay.
	stuck [numArms]int
	// byModel: the frames trial under way started where the model said
	// frames alone win (framesByModel); one clear win keeps it if the
	// model still says so at its end.
	byModel bool
	// The steady window: the last trialMeasure intervals with R within
	// steadyDrift of steadyR, once it has held for trialSettle intervals
	// (observeSteady).
	steadyR float64
	steadyN int // intervals at steadyR
	steady  [trialMeasure]window
	arms    [numArms]arm
	// compressFrom is whether demotions compressed before the frames
	// regime (a frames trial or its hold) switched them off;
	// framesApplied whether it has, framesKept whether a trial kept it
	// (syncCompressing).
	compressFrom, framesApplied, framesKept bool
	// The recent intervals: the last trialMeasure+1 outside any trial,
	// kept frames trial's hold or settle, at whatever R (a jump's trial is
	// judged against all but the newest: recentWindow, jump.go); recentN
	// counts them since they last started anew.
	recent  [trialMeasure + 1]window
	recentN int
	// jumpCompressFrom is whether demotions compressed when a jump's
	// trial started (the gate may switch them during it; a loss puts
	// them back); jumpGateSwitched whether the gate has switched them in
	// its settle (once at most: jump.go).
	jumpCompressFrom, jumpGateSwitched bool
	// jumpLostAt is the R of the last jump that lost: its back-off stops
	// only jumps to about that R or above (mayJump); jumpHoldAt the R of
	// the last jump kept, above which nothing raises R during its hold
	// (holdsJump).
	jumpLostAt, jumpHoldAt float64
}

// init sets the back-offs and holds of a controller that starts.
func (t *trial) init() {
	for i := range t.arms {
		t.arms[i].backoff, t.arms[i].keepFor = trialBackoff, trialBackoff
	}
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

// exclusiveRegime reports whether share r is in the regime the copy arm
// leaves: below the copies floor, with most demotions compressing.
func exclusiveRegime(r, alpha float64, ev evidence) bool {
	return r < copiesFloor(alpha) && ev.demotions > 0 && ev.compressions*2 >= ev.demotions
}

// copyMayPay reports whether the copy arm may pay at share r: in the
// exclusive regime, or below the floor with compressing demotions off
// (compressing false) where the compressed ghost still sees misses that
// images would serve and the device and codec say images pay
// (imagesPay). The gate judged the compressions, not the images: above
// the floor the images are the pages' read images and cost none. Without
// this, a pool that the far view or a climb took below the floor and
// whose gate then switched compressions off stayed there for good, no
// image being made for either to see (a cold pool read uniformly, data
// twice the budget, zstd-19 compressions: a jump on a hit cost inflated
// 4× by descheduling took R from 0.93 to 0.20, and R ended at 0.05 where
// 0.95 holds most of the data). Also just above the floor where images
// would serve many misses (nearFloorMisses).
func (c *controller) copyMayPay(r, alpha float64, ev evidence, compressing bool, now time.Time) bool {
	if compressing {
		return exclusiveRegime(r, alpha, ev) || c.nearFloorMisses(r, alpha, ev, now)
	}
	return r < copiesFloor(alpha) && ev.cOnMiss > 0 && c.imagesPay(alpha)
}

// floorMissShare: the copy arm may pay just above the floor where the
// compressed ghost's misses are at least this share of the accesses
// (nearFloorMisses).
const floorMissShare = 0.0025

// nearFloorMisses reports whether share r is at the copies floor (within
// 0.01, as the climb's hold there) or within steadyDrift above it, outside
// a kept copy trial's hold (whose keep on a tie lets the climb back to
// the floor: the two would undo each other), while the compressed ghost
// sees misses on at least floorMissShare of the accesses in ev, and the
// device and codec say images pay (imagesPay): R held near the floor by a
// climb whose two sides take turns, while more images would serve misses. On
// cached writes (sysbench oltp_write_only, data 0.5× the memory, 4 KiB
// pages) the climb's steps down came on intervals whose image hits cost
// about twice the usual (waits for the page cleaner: a median 38 µs,
// quartiles 20–78, against 18 µs, 16–22, for its steps up), and R hovered
// at 0.35–0.43 with 1–2% misses, where R 0.95 has none and commits 1.1×
// as much. Base reached R 0.95 only through a wrong jump of the far view
// below the floor, then a copy trial from there; with jumps measured (jump.go) the wrong jumps
// go back. The share keeps the arm from where R is near the floor by
// choice and the ghost sees only the odd miss (sysbench skewed reads at
// 1.5× the memory saw 0.015%, the writes a median of 0.84%;
// docs/BENCHMARKS.md, twenty-eighth and twenty-ninth sessions).
func (c *controller) nearFloorMisses(r, alpha float64, ev evidence, now time.Time) bool {
	floor := copiesFloor(alpha)
	return r >= floor-0.01 && r < floor+steadyDrift && !c.trial.holding(now) && ev.accesses() > 0 &&
		float64(ev.cOnMiss) >= floorMissShare*float64(ev.accesses()) && c.imagesPay(alpha)
}

// modelMargin: the model favours frames alone (framesByModel) only where
// the slope of its T_read in R exceeds its opposite by this factor.
const modelMargin = 1.25

// framesByModel reports whether document 000's model (docs/SEEDS.md,
// equation 9: pages re-read uniformly, tiers exclusive) says frames alone
// beat any share of images, clearly: its T_read rises with R where
// α × T_decom > (1 − α) × T_disk_read (the converse of imagesPay), and
// here the left side must exceed the right by modelMargin, with both costs
// measured. Where it does, a frames trial waits for no climb that wants R
// up, and one clear win keeps it if the model still says so on the costs
// measured by then (the trial's own misses included; see the top of this
// file): the measurement and the model agree. Elsewhere the frames arm
// must win twice in a row.
func (c *controller) framesByModel(alpha float64) bool {
	return alpha > 0 && c.tDisk.valid && c.tDecom.valid &&
		alpha*c.tDecom.v > modelMargin*(1-alpha)*c.tDisk.v
}

// imagesDoNotPay reports whether, both costs measured, document 000's
// model says images do not pay (the converse of imagesPay, without
// framesByModel's margin): where it is borderline so, what frames alone
// would do is for a trial to find out, neither a climb stalled in its
// noise (mayPay's stalled) nor the misses frames alone would add
// (framesAddMisses) holds the frames arm back. On a fast device with a
// slow codec (document 000's NVMe + deflate-6, 25 µs reads, 49–54 µs
// decompressions, α 0.35–0.37; data twice the budget) frames alone
// missed 53% where R 0.65 missed 13%, and read 1.16× faster.
func (c *controller) imagesDoNotPay(alpha float64) bool {
	return alpha > 0 && c.tDisk.valid && c.tDecom.valid && !c.imagesPay(alpha)
}

// imagesServe reports whether images serve enough of the accesses in ev
// for the frames arm to change anything (imageServeShare).
func imagesServe(ev evidence) bool {
	n := ev.accesses()
	return n > 0 && float64(ev.hitsC) >= imageServeShare*float64(n)
}

// framesMissShare: frames alone may pay only where they would add no more
// misses than the pool has now plus this share of its accesses
// (framesAddMisses).
const framesMissShare = 0.02

// framesAddMisses reports whether frames alone would turn so many image
// hits into misses (framesAloneMisses: more than twice the misses now,
// plus framesMissShare of the accesses) that their trial cannot pay for
// itself. Where the images hold data that fits only compressed and
// nothing misses (JSON events at 2× the memory: images 29 MiB, frames
// 2.7 MiB, 0.1% misses), frames alone would have missed about an eighth
// of the accesses: the trial lost, and with its 2 s and the 4 s of
// misses that refilled the images it had dropped, auto converged 10–12 s
// after an open where R 0.95 took 3 s (once 0.63× of R 0.95 in the 5 s
// after a 10-s warm-up; docs/BENCHMARKS.md). Where
// frames alone have won (data that fits them raw: the image hits lie
// within their reach; data 4–8× the memory: misses already 38%, and
// frames alone add a third), they add few misses or few beside those
// there are. Document 000's model saying frames alone win
// (framesByModel: a decompression costs more than the read it saves), or
// that images do not pay (imagesDoNotPay: the same without the margin,
// where misses cost little beside the decompressions they replace),
// overrides the prediction, as does a histogram too thin to trust. (The
// JSON events case above is on the real disk, where images pay by far.)
func (c *controller) framesAddMisses(alpha float64, ev evidence) bool {
	if c.framesByModel(alpha) || c.imagesDoNotPay(alpha) || c.mem.avail <= 0 {
		return false
	}
	u := c.mem.imageBytes / c.mem.avail
	predicted, ok := framesAloneMisses(u, c.minShare, alpha, &ev.depth, ev.hitsC, ev.misses)
	return ok && predicted > 2*float64(ev.misses)+framesMissShare*float64(ev.accesses())
}

// share is the R that arm a runs at (the jump arm's is the jump's own:
// startJump).
func (c *controller) share(a armKind) float64 {
	if a == armFrames {
		return c.minShare
	}
	return c.ceiling
}

// observeTrial folds one interval's measurement into a running trial. It
// reports whether a trial ran this interval (no decision is taken then)
// and the R to apply: the arm's while it runs, then that or the R before
// it (and then sets c.settling). Whether demotions compress follows
// (syncCompressing).
func (c *controller) observeTrial(iv window, now time.Time) (r float64, ran bool) {
	t := &c.trial
	if !t.active {
		return 0, false
	}
	t.intervals++
	c.settling = false // set again if this trial goes back
	if t.share > c.ceiling+steadyDrift {
		// The ceiling fell under the trial (more inner pages cached): its
		// window would mix two regimes, so it ends without a verdict,
		// its arm neither backing off nor confirming.
		c.closeTrial()
		t.arms[t.arm].confirming = false
		c.settling, c.settled = true, 0
		c.log.Debug("bufferpool: trial ends", "arm", t.arm.String(), "verdict", "none: the ceiling fell", "ceiling", c.ceiling)
		return math.Min(t.from, c.ceiling), true
	}
	if t.intervals > trialSettle {
		t.during.add(iv)
	}
	if t.intervals < trialSettle+trialMeasure {
		return t.share, true
	}
	c.closeTrial()
	a := &t.arms[t.arm]
	won := t.during.beats(t.before)
	if t.arm == armJump {
		won = t.during.clearlyBeats(t.before) // jump.go: the jump must win
	}
	if t.arm == armFrames {
		won = t.during.clearlyBeats(t.before)
		if won && a.confirming {
			// The window before the confirming trial may be the refill
			// after the first: it must beat the first's too.
			won = t.during.clearlyBeats(a.confirmBefore)
		}
	}
	confirm := t.arm == armFrames && won && !a.confirming && !(t.byModel && c.framesByModel(c.alpha))
	verdict := "lost"
	switch {
	case confirm:
		verdict = "confirm"
	case won:
		verdict = "kept"
	}
	c.log.Debug("bufferpool: trial ends", "arm", t.arm.String(), "verdict", verdict, "confirming", a.confirming,
		"rate", t.during.rate(), "before_rate", t.before.rate(), "ns", finite(t.during.perAccess()), "before_ns", finite(t.before.perAccess()))
	if confirm {
		// A first clear win goes back and is tried again without waiting
		// out the back-off, which a confirmation abandoned on the way
		// must (see the top of this file).
		a.confirming, a.confirmFrom, a.confirmBefore = true, t.from, t.before
		a.holds, a.held = c.imagesDoNotPay(c.alpha), 0
		a.notBefore = now.Add(a.backoff)
		c.settling, c.settled = true, 0
		return t.from, true
	}
	a.confirming = false
	if !won {
		if t.arm == armJump {
			t.jumpLostAt = t.share
		}
		a.lost(now)
		c.settling, c.settled = true, 0
		return t.from, true
	}
	a.won(now)
	if t.arm == armJump {
		t.jumpHoldAt = t.share // jump.go: nothing raises R above it meanwhile
		return t.share, true
	}
	if t.arm == armCopy {
		a.clear = t.during.clearlyBeats(t.before)
		// The copy regime measured since: the jump arm's keeps are no
		// longer in a row (no copy trial runs within a jump's hold: mayPay).
		t.arms[armJump].keepFor = trialBackoff
	}
	if t.arm == armFrames {
		// Frames alone: the copy hold ends, and the copy arm's keeps
		// are no longer in a row.
		t.arms[armCopy].keptUntil = time.Time{}
		t.arms[armCopy].keepFor = trialBackoff
		// Nor is the copy arm tried again before this hold and a back-off
		// of its own have passed (see the top of this file).
		if next := a.keptUntil.Add(t.arms[armCopy].backoff); next.After(t.arms[armCopy].notBefore) {
			t.arms[armCopy].notBefore = next
		}
		t.framesKept = true
	}
	return t.share, true
}

// closeTrial ends the trial under way, verdict or not: the climb and the
// gate start anew from the regime the pool is left in.
func (c *controller) closeTrial() {
	c.trial.active = false
	c.pend = evidence{}
	c.lastDir, c.step, c.floorHeld = 0, 0.05, 0
	c.resetGate()
}

// settle counts interval iv of the settle after a trial went back, given
// the memory at its end, and ends the settle (c.settling false) after at
// least trialSettle intervals with accesses once the refill is over, or
// after maxSettle intervals with accesses. The refill is over when both
// tiers are back to refillShare of what they held when the trial started
// (refillFrom), or when over the last trialSettle intervals neither the
// misses nor the accesses that were not frame hits exceed their share in
// the window the trial was judged against by more than two Poisson
// deviations: a tier may never come back where nothing refills it (the
// images after a frames trial on data that fits raw). A frames trial
// drains the images, which come back as their pages miss; a copy trial
// shrinks the frames, which come back as their pages hit images and are
// promoted (the misses are back at once there, the image hits are not).
// At a miss rate of 1–2% a refill takes many seconds (events point reads
// at 0.5× the memory, 4 KiB pages: 1.9% misses in a window after a lost
// frames trial, where R = 0.95 has none), and ten intervals were not
// enough. The last trialSettle intervals, not one: one interval of few
// accesses can miss nothing by chance.
func (c *controller) settle(mem memState, iv window) {
	if iv.n <= 0 {
		return
	}
	c.settleWin[c.settled%trialSettle] = iv
	c.settled++
	if c.settled >= maxSettle {
		c.settling = false
		return
	}
	if c.settled < trialSettle {
		return
	}
	t := &c.trial
	var w window
	for _, o := range c.settleWin {
		w.add(o)
	}
	refilled := mem.frameBytes >= refillShare*t.fromFrames && mem.imageBytes >= refillShare*t.fromImages
	if refilled || (withinPoisson(w.misses, t.fromMisses*w.n) && withinPoisson(w.misses+w.hitsC, t.fromNotFrames*w.n)) {
		c.settling = false
	}
}

// withinPoisson reports whether count n is no more than two Poisson
// deviations above the expected count e.
func withinPoisson(n, e float64) bool { return n <= e+2*math.Sqrt(e) }

// refillFrom records, for a trial that starts with the memory mem, what
// the settle after its return waits for: the tiers' bytes, as far as
// they fit at the R it returns to (t.from, which may be a step or a jump
// from where the pool was; frames may use what the images leave), and
// the shares of the accesses in the window it is judged against (t.before)
// that missed and that were not frame hits.
func (t *trial) refillFrom(mem memState) {
	t.fromImages = math.Min(mem.imageBytes, t.from*mem.avail)
	t.fromFrames = math.Min(mem.frameBytes, mem.avail-t.fromImages)
	t.fromMisses, t.fromNotFrames = 0, 0
	if t.before.n > 0 {
		t.fromMisses = t.before.misses / t.before.n
		t.fromNotFrames = (t.before.misses + t.before.hitsC) / t.before.n
	}
}

// holdsFloor reports whether R may not go to r: a kept copy trial holds
// the floor at now, and r is below it.
func (t *trial) holdsFloor(r, alpha float64, now time.Time) bool {
	return r < copiesFloor(alpha) && t.holding(now)
}

// holdsShare reports whether a copy trial kept on a clear win holds R
// where it measured it at now: neither the far view nor the climb lowers
// it meanwhile. A keep on a tie holds the floor only.
func (t *trial) holdsShare(now time.Time) bool {
	return t.holding(now) && t.arms[armCopy].clear
}

// holding reports whether a kept copy trial's hold (on the floor, and on
// R after a clear win) lasts at now.
func (t *trial) holding(now time.Time) bool { return now.Before(t.arms[armCopy].keptUntil) }

// framesHeld reports whether a kept frames trial holds the frames regime
// at now: no decision, no gate.
func (t *trial) framesHeld(now time.Time) bool { return now.Before(t.arms[armFrames].keptUntil) }

// framesOnly reports whether the frames regime is in force at now: a
// frames trial runs or its hold lasts.
func (t *trial) framesOnly(now time.Time) bool {
	return (t.active && t.arm == armFrames) || t.framesHeld(now)
}

// end ends a trial under way and every hold (SetShare: the user's R).
func (t *trial) end() {
	t.active = false
	for i := range t.arms {
		t.arms[i].keptUntil = time.Time{}
		t.arms[i].confirming = false
	}
	t.framesApplied = false
}

// mayPay reports, per arm, whether it may pay after a decision from prev
// to next on evidence ev that wanted R up (wantedUp) or not, with
// demotions compressing (compressing) or not, at now (see the top of this
// file).
func (c *controller) mayPay(prev, next, alpha float64, ev evidence, wantedUp, compressing bool, now time.Time) [numArms]bool {
	var ok [numArms]bool
	// The copy regime needs room for a copy of every frame: a ceiling
	// below the floor (inner pages taking most of the frames) leaves none.
	// Nor is it tried within a kept jump's hold: the jump's regime was
	// measured a winner against the R before it, and of 21 copy trials
	// that followed a kept jump in the twenty-ninth session's runs 20
	// lost, 19 of them by 25–62% (cached writes at 1–2× the memory,
	// sysbench special-key reads at 1×; docs/BENCHMARKS.md, thirtieth session,
	// "The copy arm waits out a kept jump's hold").
	ok[armCopy] = c.ceiling >= copiesFloor(alpha) && !c.trial.holdsJump(now) &&
		c.copyMayPay(math.Max(prev, next), alpha, ev, compressing, now)
	// Frames alone must differ from where the pool is (a frames trial
	// from frames alone would compare the regime with itself).
	differs := compressing || math.Max(prev, next) > c.minShare+steadyDrift
	// A climb that wants R up is still finding where images pay, unless R
	// was and stays at its maximum: there it cannot raise R, and wanting
	// to says nothing about frames alone (4 KiB pages, data 2–8× the
	// memory: R held at 0.95 with images serving 10–28% of the accesses,
	// and no frames trial).
	// Where document 000's model says frames alone win (framesByModel),
	// the climb's wish is noise around a regime it cannot see: in the
	// copy regime at R 0.4–0.6 its two sides stay within their noise
	// and want R up one decision in four (document 000's NVMe +
	// deflate-6 scenario, in which frames alone read 1.2–1.5× faster).
	// Nor is a climb that has wanted R up for trialPatience decisions
	// without the evidence to raise it by more than steadyDrift
	// (countStall), where images do not pay by the model either
	// (imagesDoNotPay): it is stalled in its noise, not finding (the same
	// scenario on a host that decompresses deflate-6 in 49 µs, where the
	// model is borderline: R sat at 0.66–0.68 and the frames arm,
	// 1.05–1.2× faster, was never tried).
	// A pending confirmation that holds R (holdsR) counts as a stall.
	f := &c.trial.arms[armFrames]
	stalled := (c.upStalled >= trialPatience && c.imagesDoNotPay(alpha)) || (f.confirming && f.holds)
	raising := wantedUp && math.Min(prev, next) < c.ceiling-0.005 && !c.framesByModel(alpha) && !stalled
	ok[armFrames] = imagesServe(ev) && differs && !raising && !c.framesAddMisses(alpha, ev)
	return ok
}

// maxHoldDecisions bounds the decisions a pending confirmation holds
// (holdsR): three times the decisions the confirming trial waits for once
// the steady window is full.
const maxHoldDecisions = 3 * trialPatience

// holdsR reports whether a decision that would move R leaves it where it
// is: a first frames win waits for its confirming trial, and the model
// said images do not pay when it won (imagesDoNotPay). The confirming
// trial must start from within steadyDrift of the first win's R, and the
// frames arm must qualify at every decision until then (considerTrial).
// The first win came from a climb that wanted R up only where it had
// stalled (mayPay); such a climb, given a fresh step after the trial's
// return, took R 0.05 or more up or down: a step up started its stall
// count anew, so the frames arm no longer qualified, and either dropped
// the confirmation; the next frames trial, a first one again, could lose
// to the noise (document 000's NVMe + deflate-6 scenario, skewed keys,
// decompressions twice as slow as reads: 4 of 24 runs dropped it, none
// of 16 with R held, docs/BENCHMARKS.md, twenty-fifth and twenty-sixth
// sessions). The hold
// lasts until the confirming trial starts, the confirmation ends (a
// decision in which the frames arm does not qualify once the steady
// window is full), or it has held maxHoldDecisions decisions, which then
// ends the confirmation. Each call is a decision that would move R.
func (c *controller) holdsR() bool {
	f := &c.trial.arms[armFrames]
	if !f.confirming || !f.holds {
		return false
	}
	if f.held++; f.held > maxHoldDecisions {
		f.confirming = false
		return false
	}
	return true
}

// considerTrial is called after a decision from prev to next on evidence
// ev (which wanted R up or not, with demotions compressing or not): it
// counts, per arm, the decisions in a row in which it may pay, and starts
// a trial of the first arm that has had enough of them and is not waiting
// out a back-off (a frames confirmation does not wait), given a full
// steady window to be judged against. It reports the R to apply.
func (c *controller) considerTrial(prev, next, alpha float64, ev evidence, wantedUp, compressing bool, now time.Time) float64 {
	t := &c.trial
	ok := c.mayPay(prev, next, alpha, ev, wantedUp, compressing, now)
	before, full := t.steadyWindow()
	start := -1
	for a := range t.arms {
		if !ok[a] {
			t.stuck[a] = 0
			if full {
				// A first win is confirmed only in a row; the refill after
				// it (the steady window not yet full) does not count.
				t.arms[a].confirming = false
			}
			continue
		}
		t.stuck[a]++
		if start < 0 && t.stuck[a] >= trialPatience && (t.arms[a].confirming || !now.Before(t.arms[a].notBefore)) {
			start = a
		}
	}
	if start < 0 || !full || before.n == 0 {
		return next
	}
	a := armKind(start)
	if f := &t.arms[armFrames]; f.confirming && (a != armFrames || math.Abs(next-f.confirmFrom) > steadyDrift) {
		f.confirming = false // another regime measured since the first win
		if a == armFrames && now.Before(f.notBefore) {
			return next // only a confirming trial skips the back-off
		}
	}
	return c.beginTrial(a, next, c.share(a), before, a == armFrames && c.framesByModel(alpha))
}

// beginTrial starts a trial of arm a from R from at R share, judged
// against window before (byModel: see trial.byModel), and returns share.
func (c *controller) beginTrial(a armKind, from, share float64, before window, byModel bool) float64 {
	t := &c.trial
	if a != armFrames {
		t.arms[armFrames].confirming = false // another regime measured since a first frames win
	}
	t.active, t.arm, t.from, t.share, t.before, t.byModel = true, a, from, share, before, byModel
	t.refillFrom(c.mem)
	c.resetGate() // the gate's windows start with the new regime
	t.intervals, t.during = 0, window{}
	t.stuck, t.steadyN, t.recentN = [numArms]int{}, 0, 0
	t.arms[a].tried++
	c.log.Debug("bufferpool: trial starts", "arm", a.String(), "from", from, "share", share,
		"by_model", byModel, "confirming", t.arms[a].confirming, "before_rate", before.rate(), "before_ns", finite(before.perAccess()))
	return share
}

// syncCompressing switches compressing demotions off when the frames
// regime comes into force (a frames trial starts, or is kept and held),
// and back to what they were when a frames trial loses; when a kept one's
// hold ends they stay off and the gate judges whether they should come
// back. The steady window and the gate's windows start anew whenever the
// frames regime starts or ends.
func (c *controller) syncCompressing(p *Pool, now time.Time) {
	t := &c.trial
	on := t.framesOnly(now)
	switch {
	case on && !t.framesApplied:
		t.compressFrom = p.compressing.Load()
		p.compressing.Store(false)
	case !on && t.framesApplied && !t.framesKept:
		p.compressing.Store(t.compressFrom)
	}
	if on != t.framesApplied {
		t.steadyN = 0
		c.resetGate()
	}
	if !on {
		t.framesKept = false
	}
	t.framesApplied = on
}
