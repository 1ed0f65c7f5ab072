package bufferpool

import (
	"testing"
	"time"
)

// exclusiveEv is a decision's evidence in the exclusive regime: every
// demotion compressing, and too few image hits (1%) for the frames arm.
var exclusiveEv = evidence{hitsU: 990, hitsC: 10, frameEvictions: 100, demotions: 100, compressions: 100}

// before is the window every interval measures before a trial in these
// tests: 1,000 accesses at 100 ns each over a 100 ms interval.
var beforeWin = window{cost: 100e3, n: 1000, wall: 100e6}

// runTrial drives controller c through trialPatience decisions at R 0.3
// (below the floor for α 0.5) on evidence ev, after enough intervals at
// that R measured as beforeWin to fill the steady window, then through a
// trial whose every interval measures trialWin. It returns the R after the
// trial, or fails if none ran.
func runTrial(t *testing.T, c *controller, ev evidence, trialWin window, now time.Time) float64 {
	t.Helper()
	const alpha = 0.5
	r := 0.3
	for i := 0; i < trialSettle+trialMeasure; i++ {
		c.trial.observeSteady(beforeWin, r)
	}
	for i := 0; i < trialPatience; i++ {
		c.trial.observeSteady(beforeWin, r)
		next := c.considerTrial(r, r, alpha, ev, false, true, now)
		if i < trialPatience-1 && next != r {
			t.Fatalf("decision %d in the exclusive regime: R %.2f, want it held until %d", i, next, trialPatience)
		}
		r = next
	}
	if r != 0.95 || !c.trial.active {
		t.Fatalf("after %d decisions in the exclusive regime: R %.2f, trial %v; want a trial at 0.95", trialPatience, r, c.trial.active)
	}
	for i := 1; ; i++ {
		to, ran := c.observeTrial(trialWin, now)
		if !ran {
			t.Fatalf("interval %d: no trial ran", i)
		}
		if !c.trial.active {
			if i != trialSettle+trialMeasure {
				t.Fatalf("the trial ended after %d intervals, want %d", i, trialSettle+trialMeasure)
			}
			if _, ran := c.observeTrial(window{}, now); ran {
				t.Fatal("a trial ran after the trial ended")
			}
			return to
		}
		if to != 0.95 {
			t.Fatalf("interval %d of the trial: R %.2f, want 0.95 held", i, to)
		}
	}
}

// TestControllerTrialLeavesExclusiveRegime: below the copies floor with
// every demotion compressing for trialPatience decisions, whether the
// images use their share or not, the controller tries R = 1 − MinShare,
// measures it, and keeps it when it is faster; when it is slower it goes
// back and does not try again for trialBackoff, then twice that.
func TestControllerTrialLeavesExclusiveRegime(t *testing.T) {
	const alpha = 0.5
	start := time.Unix(1000, 0)
	faster := window{cost: 60e3, n: 1000, wall: 100e6} // same rate, 60 ns an access
	slower := window{cost: 150e3, n: 1000, wall: 100e6}
	for _, ev := range []evidence{exclusiveEv, {hitsU: 9900, hitsC: 100, imageEvictions: 10, demotions: 100, compressions: 100}} {
		c := testController()
		if r := runTrial(t, c, ev, faster, start); r != 0.95 || c.trial.arms[armCopy].kept != 1 {
			t.Fatalf("evidence %+v, faster at 0.95: R %.2f after the trial, kept %d; want 0.95 kept", ev, r, c.trial.arms[armCopy].kept)
		}
	}
	c := testController()
	runTrial(t, c, exclusiveEv, faster, start)
	// After a kept trial R may not be lowered for trialBackoff; later it
	// may.
	if !c.trial.holding(start.Add(time.Second)) || c.trial.holding(start.Add(2*trialBackoff)) {
		t.Error("after a kept trial: want a hold within trialBackoff only")
	}

	c = testController()
	if r := runTrial(t, c, exclusiveEv, slower, start); r != 0.3 {
		t.Fatalf("slower at 0.95 (150 against 100 ns): R %.2f after the trial, want back to 0.3", r)
	}
	decideHeld := func(now time.Time) float64 {
		r := 0.3
		for i := 0; i < 2*trialPatience; i++ {
			c.trial.observeSteady(beforeWin, r)
			r = c.considerTrial(r, r, alpha, exclusiveEv, false, true, now)
		}
		return r
	}
	if r := decideHeld(start.Add(trialBackoff / 2)); r != 0.3 || c.trial.active {
		t.Fatalf("within the back-off after a lost trial: R %.2f, trial %v; want no new trial", r, c.trial.active)
	}
	// A second loss in a row waits twice as long. (A decision out of the
	// regime first, so that the next trial needs trialPatience again.)
	later := start.Add(trialBackoff + time.Second)
	c.considerTrial(0.5, 0.5, alpha, exclusiveEv, false, true, later)
	if r := runTrial(t, c, exclusiveEv, slower, later); r != 0.3 {
		t.Fatalf("second trial, slower: R %.2f, want 0.3", r)
	}
	if r := decideHeld(later.Add(trialBackoff + time.Second)); r != 0.3 || c.trial.active {
		t.Fatalf("%v after a second lost trial: a new trial started; want the back-off doubled", trialBackoff+time.Second)
	}
	if c.trial.arms[armCopy].backoff != 4*trialBackoff {
		t.Errorf("after two lost trials in a row: next back-off %v, want %v", c.trial.arms[armCopy].backoff, 4*trialBackoff)
	}
	c.considerTrial(0.5, 0.5, alpha, exclusiveEv, false, true, later)
	if r := runTrial(t, c, exclusiveEv, faster, later.Add(2*trialBackoff+time.Second)); r != 0.95 || c.trial.arms[armCopy].kept != 1 {
		t.Fatalf("third trial, faster: R %.2f, kept %d; want 0.95 kept", r, c.trial.arms[armCopy].kept)
	}
	if c.trial.arms[armCopy].backoff != trialBackoff {
		t.Errorf("after a kept trial: next back-off %v, want it reset to %v", c.trial.arms[armCopy].backoff, trialBackoff)
	}
	// Kept trials in a row hold twice as long each, up to
	// maxTrialBackoff; a lost one resets that.
	c = testController()
	for i, want := range []time.Duration{1, 2, 4, 8, 16, 16} {
		now := start.Add(time.Duration(i) * time.Hour)
		c.considerTrial(0.5, 0.5, alpha, exclusiveEv, false, true, now)
		runTrial(t, c, exclusiveEv, faster, now)
		if got := c.trial.arms[armCopy].keptUntil.Sub(now); got != want*trialBackoff {
			t.Errorf("kept trial %d in a row: held for %v, want %v", i+1, got, want*trialBackoff)
		}
	}
	c.considerTrial(0.5, 0.5, alpha, exclusiveEv, false, true, start.Add(10*time.Hour))
	runTrial(t, c, exclusiveEv, slower, start.Add(10*time.Hour))
	if c.trial.arms[armCopy].keepFor != trialBackoff {
		t.Errorf("after a lost trial: next hold %v, want it reset to %v", c.trial.arms[armCopy].keepFor, trialBackoff)
	}

	// Not the exclusive regime, compressing: demotions free (pages keep
	// their images), or R above the floor. (With compressions off see
	// TestCopyTrialWithCompressionsOff.)
	c = testController()
	for _, tc := range []struct {
		r  float64
		ev evidence
	}{
		{0.3, evidence{hitsU: 9900, hitsC: 100, demotions: 100, compressions: 10}},
		{0.3, evidence{hitsU: 9900, hitsC: 100}},
		{0.5, exclusiveEv},
	} {
		r := tc.r
		for i := 0; i < trialSettle+trialMeasure+2*trialPatience; i++ {
			c.trial.observeSteady(beforeWin, r)
			r = c.considerTrial(r, r, alpha, tc.ev, false, true, start)
		}
		if r != tc.r || c.trial.active {
			t.Errorf("R %.2f, evidence %+v: a trial started (R %.2f)", tc.r, tc.ev, r)
		}
	}
}

// TestTrialJudgesByThroughput: where the accesses a second differ by more
// than trialMargin they decide, whatever the time per access says (with
// more threads than CPUs wall times include the waits for a CPU: JSON
// events at 0.5×, 4 threads, ran 1.3× faster at R = 0.95 while its
// measured time per access was higher than R = 0's); where they do not
// (an open loop serves the same rate), the time per access decides.
func TestTrialJudgesByThroughput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		during window
		beats  bool
	}{
		{"more accesses a second, each slower by wall time", window{cost: 150e3, n: 1300, wall: 100e6}, true},
		{"fewer accesses a second, each faster by wall time", window{cost: 50e3, n: 800, wall: 100e6}, false},
		{"same rate, faster per access", window{cost: 60e3, n: 1000, wall: 100e6}, true},
		{"same rate, within the margin per access", window{cost: 104e3, n: 1020, wall: 100e6}, true},
		{"same rate, slower per access", window{cost: 130e3, n: 1000, wall: 100e6}, false},
		{"no wall time: per access", window{cost: 60e3, n: 1000}, true},
		{"no accesses", window{wall: 100e6}, false},
		// An interval without accesses (the load paused): the rate
		// measures the load, not the pool; per access decides.
		{"more accesses a second, an idle interval", window{cost: 150e3, n: 1300, wall: 100e6, idle: 1}, false},
	} {
		if got := tc.during.beats(beforeWin); got != tc.beats {
			t.Errorf("%s: beats %v, want %v", tc.name, got, tc.beats)
		}
	}
}

// TestKeptTrialHoldsItsR: within the hold after a copy trial kept on a
// clear win, neither the climb nor the far view lowers R from where the
// trial measured it; after the hold they may. Holding only the floor let
// the climb take R from 0.95 back to the floor on cached sysbench writes
// (data 0.5× the memory), where the images no longer hold every page: a
// copy trial that won by 20% was undone within seconds
// (docs/BENCHMARKS.md, twenty-eighth session). A keep on a tie holds the
// floor only.
func TestKeptTrialHoldsItsR(t *testing.T) {
	const alpha = 0.5
	floor := copiesFloor(alpha)
	start := time.Unix(1000, 0)
	c := testController()
	c.tDisk = ewma{} // no disk time: imagesPay false, so only the trial holds R
	runTrial(t, c, exclusiveEv, window{cost: 60e3, n: 1000, wall: 100e6}, start)
	down := ghosts(200, 0) // the frames' ghost wins every decision
	shallow := down
	shallow.depth[depthScale/8] = shallow.hitsC // the far view would jump
	r := 0.95
	for i := 0; i < 60; i++ {
		c.now = start.Add(time.Duration(i) * time.Second / 10)
		ev := down
		if i%2 == 1 {
			ev = shallow
		}
		r = c.decide(r, r, alpha, fullMem, ev)
	}
	if r != 0.95 || c.jumps != 0 {
		t.Fatalf("within the hold after a kept trial, 60 decisions wanting lower: R %.3f after %d jumps, want 0.95 and none", r, c.jumps)
	}
	for i := 0; i < 60; i++ {
		c.now = start.Add(trialBackoff + time.Duration(i)*time.Second)
		r = c.decide(r, r, alpha, fullMem, down)
	}
	if r >= floor {
		t.Fatalf("after the hold: R %.3f, want below the floor %.3f", r, floor)
	}

	// Kept on a tie (the same rate and time per access): the floor only.
	c = testController()
	c.tDisk = ewma{}
	runTrial(t, c, exclusiveEv, beforeWin, start)
	if !c.trial.holding(start) || c.trial.holdsShare(start) {
		t.Fatalf("kept on a tie: holding %v, holding R %v; want the floor held only", c.trial.holding(start), c.trial.holdsShare(start))
	}
	r = 0.95
	for i := 0; i < 60; i++ {
		c.now = start.Add(time.Duration(i) * time.Second / 10)
		r = c.decide(r, r, alpha, fullMem, down)
	}
	if r < floor-1e-9 || r > floor+0.01 {
		t.Fatalf("within the hold after a keep on a tie, 60 decisions wanting lower: R %.3f, want the floor %.3f", r, floor)
	}
}

// TestTrialComparesSteadyWindows: a trial starts only once R has held for
// trialSettle + trialMeasure intervals, and is judged against the last
// trialMeasure of them, not against the settling intervals after R moved
// (there the pool still refills, and its rate says nothing of the R).
func TestTrialComparesSteadyWindows(t *testing.T) {
	const alpha = 0.5
	start := time.Unix(1000, 0)
	c := testController()
	r := 0.3
	slowSettling := window{cost: 300e3, n: 500, wall: 100e6} // half the rate while the pool refills
	for i := 0; i < trialSettle; i++ {
		c.trial.observeSteady(slowSettling, r)
	}
	for i := 0; i < trialPatience; i++ {
		c.trial.observeSteady(beforeWin, r)
		if next := c.considerTrial(r, r, alpha, exclusiveEv, false, true, start); next != r {
			t.Fatalf("a trial started after %d steady intervals, before the steady window was full", trialSettle+i+1)
		}
	}
	for i := trialPatience; i < trialMeasure; i++ {
		c.trial.observeSteady(beforeWin, r)
	}
	if r = c.considerTrial(r, r, alpha, exclusiveEv, false, true, start); r != 0.95 {
		t.Fatalf("steady window full after %d decisions in the exclusive regime: R %.2f, want a trial", trialPatience, r)
	}
	if c.trial.before != (window{cost: 10 * beforeWin.cost, n: 10 * beforeWin.n, wall: 10 * beforeWin.wall}) {
		t.Fatalf("before window %+v: want the %d steady intervals only", c.trial.before, trialMeasure)
	}
	// A trial at 0.8× the steady rate loses, though it beats the settling
	// intervals' rate by 1.6×.
	for c.trial.active {
		r, _ = c.observeTrial(window{cost: 100e3, n: 800, wall: 100e6}, start)
	}
	if r != 0.3 {
		t.Fatalf("trial at 0.8x the steady rate: R %.2f after it, want back to 0.3", r)
	}
	// Small steps of the climb (within steadyDrift of where the window
	// started) keep it; a move beyond starts it anew.
	for i := 0; i < trialSettle+trialMeasure; i++ {
		c.trial.observeSteady(beforeWin, 0.3)
	}
	for _, r := range []float64{0.31, 0.33, 0.27, 0.34} {
		if c.trial.observeSteady(beforeWin, r); func() bool { _, full := c.trial.steadyWindow(); return !full }() {
			t.Fatalf("steady window lost after a step to %.2f (started at 0.3)", r)
		}
	}
	c.trial.observeSteady(beforeWin, 0.2)
	if _, full := c.trial.steadyWindow(); full {
		t.Fatal("steady window still full after R moved from 0.3 to 0.2")
	}
}

// TestKeptTrialHoldCountsNoSteps: while a kept trial holds R (here at
// the floor), the decisions that want lower are not steps: ControllerSteps
// stays, and the step shrinks instead of growing, so that the climb
// does not drop a full step below the floor when the hold ends.
func TestKeptTrialHoldCountsNoSteps(t *testing.T) {
	const alpha = 0.5
	floor := copiesFloor(alpha)
	start := time.Unix(1000, 0)
	c := testController()
	c.tDisk = ewma{}
	runTrial(t, c, exclusiveEv, window{cost: 60e3, n: 1000, wall: 100e6}, start)
	c.now = start.Add(time.Second)
	r := floor
	steps := c.adjustments
	for i := 0; i < 20; i++ {
		if r = c.decide(r, r, alpha, fullMem, ghosts(200, 0)); r != floor {
			t.Fatalf("decision %d at the held floor: R %.3f, want %.3f", i, r, floor)
		}
	}
	if c.adjustments != steps {
		t.Errorf("held at the floor for 20 decisions: %d steps counted, want 0", c.adjustments-steps)
	}
	if c.step != minStep {
		t.Errorf("held at the floor for 20 decisions: step %.3f, want it shrunk to %.3f", c.step, minStep)
	}
	c.trial.end()
	if c.trial.holding(c.now) {
		t.Error("the hold outlived end (SetShare)")
	}
}

// TestTrialDespiteWanderingClimb: a climb that steps every decision
// within the exclusive regime, a little up and down, still gets its trial
// (sysbench point reads at 0.5×, 4 KiB: R wandered between 0.05 and 0.2,
// at 0.65× of R = 0, and no trial ran while any step reset the window).
func TestTrialDespiteWanderingClimb(t *testing.T) {
	const alpha = 0.5
	c := testController()
	r := 0.12
	for i := 0; i < trialSettle+trialMeasure+trialPatience; i++ {
		c.trial.observeSteady(beforeWin, r)
		next := 0.12 + 0.02*float64(i%3) // 0.12, 0.14, 0.16, 0.12, ...
		if got := c.considerTrial(r, next, alpha, exclusiveEv, false, true, time.Unix(1000, 0)); got == 0.95 {
			return
		}
		r = next
	}
	t.Fatalf("no trial after %d decisions stepping within 0.12–0.16", trialSettle+trialMeasure+trialPatience)
}

// TestCopyTrialWithCompressionsOff: below the floor with compressing
// demotions off (the gate's), no image is made, so neither the climb nor
// the far view sees anything to raise R for. Where the compressed ghost
// sees misses the images would serve and the device and codec say images
// pay, the copy arm is tried (its images are the pages' read images: no
// compression); without such misses, where images do not pay, or above
// the floor, it is not.
func TestCopyTrialWithCompressionsOff(t *testing.T) {
	const alpha = 0.5
	start := time.Unix(1000, 0)
	dropped := evidence{hitsU: 800, misses: 200, frameEvictions: 200, cOnMiss: 20}
	try := func(c *controller, r float64, ev evidence) bool {
		return tryCopyTrial(c, r, alpha, ev, false, start)
	}
	// From compressions off the images start empty and fill as pages
	// miss: a tie keeps the copy arm, as elsewhere; a loss goes back.
	for _, tc := range []struct {
		name string
		win  window
		want float64
	}{
		{"a tie", beforeWin, 0.95},
		{"a rate 1.3× lower", window{cost: 100e3, n: 700, wall: 100e6}, 0.05},
	} {
		c := testController()
		if !try(c, 0.05, dropped) {
			t.Fatal("R 0.05, compressions off, the compressed ghost seeing misses, images paying: want a copy trial")
		}
		r := 0.0
		for c.trial.active {
			r, _ = c.observeTrial(tc.win, start)
		}
		if r != tc.want {
			t.Errorf("a copy trial from compressions off, %s: R %.2f after it, want %.2f", tc.name, r, tc.want)
		}
	}
	slowCodec := testController()
	slowCodec.tDecom = ewma{v: float64(500 * time.Microsecond), valid: true}
	noGhost := dropped
	noGhost.cOnMiss = 0
	for _, tc := range []struct {
		name string
		c    *controller
		r    float64
		ev   evidence
	}{
		{"no miss the images would serve", testController(), 0.05, noGhost},
		{"decompression dearer than the reads images spare", slowCodec, 0.05, dropped},
		{"above the floor", testController(), 0.5, dropped},
	} {
		if try(tc.c, tc.r, tc.ev) {
			t.Errorf("%s: a copy trial started", tc.name)
		}
	}
}

// TestTrialJudgedByProgress: where the pool's user counts its operations
// (Options.Progress), a trial is judged by their rate, not by the page
// accesses a second: a regime that completes more operations with fewer
// accesses (cached writes that no longer miss, and so are no longer
// deferred) wins.
func TestTrialJudgedByProgress(t *testing.T) {
	before := window{cost: 100e3, n: 1000, wall: 100e6, work: 100, progress: true}
	fewerAccessesMoreWork := window{cost: 100e3, n: 800, wall: 100e6, work: 130, progress: true}
	moreAccessesLessWork := window{cost: 100e3, n: 1300, wall: 100e6, work: 80, progress: true}
	if higher, decided := fewerAccessesMoreWork.byRate(before); !decided || !higher {
		t.Errorf("30%% more operations on 20%% fewer accesses: higher %v, decided %v; want a win", higher, decided)
	}
	if higher, decided := moreAccessesLessWork.byRate(before); !decided || higher {
		t.Errorf("20%% fewer operations on 30%% more accesses: higher %v, decided %v; want a loss", higher, decided)
	}
	// Without progress, accesses are the measure.
	a, b := fewerAccessesMoreWork, before
	a.progress, b.progress = false, false
	if higher, decided := a.byRate(b); !decided || higher {
		t.Errorf("no progress counted, 20%% fewer accesses: higher %v, decided %v; want a loss", higher, decided)
	}
}

// tryCopyTrial fills controller c's steady window at R r, then takes up to
// trialPatience decisions at r on evidence ev (demotions compressing or
// not) until a trial starts, and reports whether a copy trial did.
func tryCopyTrial(c *controller, r, alpha float64, ev evidence, compressing bool, now time.Time) bool {
	for i := 0; i < trialSettle+trialMeasure; i++ {
		c.trial.observeSteady(beforeWin, r)
	}
	for i := 0; i < trialPatience && !c.trial.active; i++ {
		c.trial.observeSteady(beforeWin, r)
		c.considerTrial(r, r, alpha, ev, false, compressing, now)
	}
	return c.trial.active && c.trial.arm == armCopy
}
