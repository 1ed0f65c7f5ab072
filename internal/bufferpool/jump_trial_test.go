package bufferpool

import (
	"testing"
	"time"
)

// shallowEv is a decision's evidence on which the far view jumps: image
// hits an eighth of the memory below the frames, where larger frames would
// hold them, and few misses.
func shallowEv() evidence {
	ev := evidence{hitsU: 8000, hitsC: 1000, misses: 10, frameEvictions: 1000, demotions: 1000}
	ev.depth[depthScale/8] = 1000
	return ev
}

// jumpController is a controller whose far view jumps on shallowEv.
func jumpController() *controller {
	c := testController()
	c.tHitC = ewma{v: 20e3, valid: true}
	c.tMiss = ewma{v: 100e3, valid: true}
	return c
}

// jumpOnce takes a decision on shallowEv from R r at now and starts the
// trial of the jump if the far view jumped; it reports the R after it.
func jumpOnce(c *controller, r float64, now time.Time) float64 {
	c.now = now
	c.pend = shallowEv()
	jumps := c.jumps
	next := c.climb(r, r, 0.5, fullMem)
	if c.jumps > jumps {
		next = c.startJump(r, next, true)
	}
	return next
}

// fillRecent records win as every recent interval (recentWindow).
func fillRecent(c *controller, win window) {
	for range c.trial.recent {
		c.trial.observeRecent(win)
	}
}

// TestFarViewJumpIsMeasured: a jump of the far view is a trial of its own
// arm, judged against the recent window (the intervals before the one it
// was decided on, at whatever R): it waits for such a window; one that
// loses, or ties, goes back to the R before it and the far view waits out
// the back-off before it jumps again; one that clearly wins is kept. On cached writes the far view
// jumped from R 0.45 to 0.05 every 3–5 s on an image hit's time inflated
// for one interval, where R 0.95 committed 1.14–1.22× as much
// (docs/BENCHMARKS.md, twenty-eighth session).
func TestFarViewJumpIsMeasured(t *testing.T) {
	start := time.Unix(1000, 0)
	c := jumpController()
	if r := jumpOnce(c, 0.9, start); r != 0.9 || c.jumps != 0 || c.trial.active {
		t.Fatalf("no recent window: R %.2f after %d jumps, trial %v; want the jump held", r, c.jumps, c.trial.active)
	}
	fillRecent(c, beforeWin)
	r := jumpOnce(c, 0.9, start)
	if r >= 0.9 || c.jumps != 1 || !c.trial.active || c.trial.arm != armJump {
		t.Fatalf("a recent window: R %.2f after %d jumps, trial %v of %v; want a jump measured as a trial", r, c.jumps, c.trial.active, c.trial.arm)
	}
	slower := beforeWin
	slower.n *= 0.8 // 20% fewer accesses a second
	slower.cost *= 0.8
	if r := finishTrial(t, c, slower, start); r != 0.9 || !c.settling || c.trial.arms[armJump].kept != 0 {
		t.Fatalf("a jump that ran 0.8× as fast: R %.2f after it, settling %v, kept %d; want back at 0.9, settling, none kept",
			r, c.settling, c.trial.arms[armJump].kept)
	}
	c.settling = false
	fillRecent(c, beforeWin)
	if r := jumpOnce(c, 0.9, start.Add(trialBackoff-time.Second)); r < 0.9-maxStep || c.jumps != 1 || c.trial.active {
		t.Fatalf("within the back-off: R %.2f after %d jumps, trial %v; want no jump", r, c.jumps, c.trial.active)
	}
	fillRecent(c, beforeWin)
	to := jumpOnce(c, 0.9, start.Add(trialBackoff))
	if to >= 0.9 || c.jumps != 2 || !c.trial.active {
		t.Fatalf("after the back-off: R %.2f after %d jumps, trial %v; want a jump measured again", to, c.jumps, c.trial.active)
	}
	// As fast, and by the objective as cheap: a tie, which goes back.
	if r := finishTrial(t, c, beforeWin, start.Add(trialBackoff)); r != 0.9 || c.trial.arms[armJump].kept != 0 {
		t.Fatalf("a jump that ran as fast: R %.2f after it, kept %d; want back at 0.9, none kept", r, c.trial.arms[armJump].kept)
	}
	c.settling = false
	fillRecent(c, beforeWin)
	later := start.Add(3 * trialBackoff) // the second loss, a minute in, waits twice as long
	if r := jumpOnce(c, 0.9, later.Add(-time.Second)); c.trial.active || r < 0.9-maxStep {
		t.Fatalf("within the doubled back-off: R %.2f, trial %v; want no jump", r, c.trial.active)
	}
	fillRecent(c, beforeWin)
	if to = jumpOnce(c, 0.9, later); !c.trial.active {
		t.Fatalf("after the doubled back-off: R %.2f, want a jump measured again", to)
	}
	faster := beforeWin
	faster.n *= 1.2
	faster.cost *= 1.2
	if r := finishTrial(t, c, faster, later); r != to || c.settling || c.trial.arms[armJump].kept != 1 {
		t.Fatalf("a jump that ran 1.2× as fast: R %.2f after it, settling %v, kept %d; want %.2f kept", r, c.settling, c.trial.arms[armJump].kept, to)
	}
	// A kept jump is held from above: within its hold the climb raises R
	// no higher than the jump's, the far view may jump again once the
	// recent window has refilled; after it the climb may raise R.
	// A step up held so is no step (the climb's step, direction and count
	// stay as they were) but a stall: it wanted R up and could not.
	c.now = later.Add(time.Second)
	c.pend = ghosts(0, 200)
	c.climb(to, to, 0.5, fullMem) // the first decision at the jump's R starts the stall count there
	c.pend = ghosts(0, 200)
	steps, step, dir, stalled := c.adjustments, c.step, c.lastDir, c.upStalled
	if r := c.climb(to, to, 0.5, fullMem); r != to || c.adjustments != steps || c.step != step || c.lastDir != dir || c.upStalled != stalled+1 {
		t.Fatalf("within a kept jump's hold, the compressed ghost winning: R %.3f, steps %d, step %.3f, direction %d, stalled %d; want the jump's %.3f held, %d, %.3f, %d, %d",
			r, c.adjustments, c.step, c.lastDir, c.upStalled, to, steps, step, dir, stalled+1)
	}
	c.pend = ghosts(0, 200)
	if r := c.climb(to-0.1, to-0.1, 0.5, fullMem); r <= to-0.1 || r > to || c.adjustments != steps+1 || c.lastDir != 1 {
		t.Fatalf("within a kept jump's hold, from below it: R %.3f, steps %d, direction %d; want raised up to the jump's %.3f at most, a step up counted",
			r, c.adjustments, c.lastDir, to)
	}
	fillRecent(c, beforeWin)
	if r := jumpOnce(c, 0.9, later.Add(time.Second)); !c.trial.active || c.trial.arm != armJump {
		t.Fatalf("within a kept jump's hold: R %.2f, trial %v; want the next jump measured at once", r, c.trial.active)
	}
	c.trial.active = false
	c.now = later.Add(trialBackoff + time.Second)
	c.pend = ghosts(0, 200)
	if r := c.climb(to, to, 0.5, fullMem); r <= to {
		t.Fatalf("after a kept jump's hold, the compressed ghost winning: R %.3f, want above the jump's %.3f", r, to)
	}
}

// TestJumpHoldDefersCopyArm: within a kept jump's hold the copy arm is
// not tried, in the exclusive regime or where the gate switched
// compressions off, however long it qualifies; once the hold ends it is,
// and a keep of it ends the jump arm's keeps in a row.
// Of 21 copy trials that followed a kept jump, 20 lost (19 of them by
// 25–62%, cached writes at 1–2× the memory and special-key reads at 1×;
// docs/BENCHMARKS.md, thirtieth session).
func TestJumpHoldDefersCopyArm(t *testing.T) {
	const alpha = 0.5
	start := time.Unix(1000, 0)
	held := func() *controller {
		c := testController()
		c.trial.arms[armJump].keptUntil = start.Add(time.Minute)
		c.trial.jumpHoldAt = 0.05
		return c
	}
	// Compressions off below the floor, the compressed ghost seeing misses.
	off := evidence{hitsU: 9000, misses: 1000, frameEvictions: 1000, cOnMiss: 500}
	for _, tc := range []struct {
		name        string
		ev          evidence
		compressing bool
	}{{"exclusive regime", exclusiveEv, true}, {"compressions off", off, false}} {
		if c := held(); tryCopyTrial(c, 0.05, alpha, tc.ev, tc.compressing, start.Add(59*time.Second)) {
			t.Errorf("%s, within a kept jump's hold: a copy trial started", tc.name)
		}
		if c := held(); !tryCopyTrial(c, 0.05, alpha, tc.ev, tc.compressing, start.Add(time.Minute)) {
			t.Errorf("%s, the jump's hold over: want a copy trial", tc.name)
		}
	}
	// A copy trial kept after the hold ends the jump arm's keeps in a row:
	// the next kept jump holds for trialBackoff again.
	c := held()
	c.trial.arms[armJump].keepFor = 4 * trialBackoff
	after := start.Add(time.Minute)
	if !tryCopyTrial(c, 0.05, alpha, exclusiveEv, true, after) {
		t.Fatal("the jump's hold over: want a copy trial")
	}
	faster := beforeWin
	faster.n *= 1.3
	if finishTrial(t, c, faster, after); c.trial.arms[armCopy].kept != 1 || c.trial.arms[armJump].keepFor != trialBackoff {
		t.Fatalf("a copy trial 1.3× as fast: kept %d, the jump arm's next hold %v; want kept, %v", c.trial.arms[armCopy].kept, c.trial.arms[armJump].keepFor, trialBackoff)
	}
}

// TestLostJumpBacksOffShallowerJumps: a lost jump's back-off stops the
// far view from jumping to about its R or above, not further down: a loss
// says nothing of frames larger still (cached writes at 2× the memory: a
// jump from 0.55 to 0.35 tied and went back, and its back-off kept the
// far view from the jump to 0.05, which wins there by a quarter or more).
func TestLostJumpBacksOffShallowerJumps(t *testing.T) {
	start := time.Unix(1000, 0)
	c := jumpController()
	fillRecent(c, beforeWin)
	c.startJump(0.55, 0.35, true)
	slower := beforeWin
	slower.n *= 0.8
	slower.cost *= 0.8
	if r := finishTrial(t, c, slower, start); r != 0.55 {
		t.Fatalf("a jump that ran 0.8× as fast: R %.2f after it, want back at 0.55", r)
	}
	for _, tc := range []struct {
		to   float64
		want bool
	}{{0.35, false}, {0.5, false}, {0.31, false}, {0.29, true}, {0.05, true}} {
		if got := c.trial.mayJump(tc.to, start.Add(time.Second)); got != tc.want {
			t.Errorf("within the back-off of a lost jump to 0.35: may jump to %.2f %v, want %v", tc.to, got, tc.want)
		}
	}
	if !c.trial.mayJump(0.35, start.Add(trialBackoff)) {
		t.Error("after the back-off: want jumps to any R again")
	}
}

// TestJumpJudgedAgainstIntervalsBefore: the recent window a jump is
// judged against is the trialMeasure intervals before the newest (the one
// the jump was decided on, whose costs may have spiked); with fewer
// recorded the jump waits. A jump's trial ends a pending frames
// confirmation (another regime was measured since the first win).
func TestJumpJudgedAgainstIntervalsBefore(t *testing.T) {
	c := jumpController()
	for i := 0; i < trialMeasure; i++ {
		c.trial.observeRecent(beforeWin)
	}
	if _, ok := c.trial.recentWindow(); ok {
		t.Fatalf("%d intervals recorded: want no recent window (the newest is left out)", trialMeasure)
	}
	if r := jumpOnce(c, 0.9, time.Unix(1000, 0)); r != 0.9 || c.trial.active {
		t.Fatalf("%d intervals recorded: R %.2f, trial %v; want the jump to wait", trialMeasure, r, c.trial.active)
	}
	spike := window{cost: 1e9, n: 10, wall: 100e6} // the interval the jump is decided on
	c.trial.observeRecent(spike)
	w, ok := c.trial.recentWindow()
	if want := (window{cost: trialMeasure * beforeWin.cost, n: trialMeasure * beforeWin.n, wall: trialMeasure * beforeWin.wall}); !ok || w != want {
		t.Fatalf("recent window %+v, %v; want the %d intervals before the newest, %+v", w, ok, trialMeasure, want)
	}
	c.trial.arms[armFrames].confirming = true
	if jumpOnce(c, 0.9, time.Unix(1000, 0)); !c.trial.active || c.trial.arms[armFrames].confirming {
		t.Fatalf("a jump's trial: active %v, frames confirming %v; want a trial and the confirmation ended", c.trial.active, c.trial.arms[armFrames].confirming)
	}
}

// TestJumpTrialInPool drives a pool's own adjust through a jump's trial:
// the gate judges in its settle, not in its measured window (the regime a
// jump leads to includes the gate's verdict there: compressions off at R
// 0.05 for cached writes at 1–2× the memory), and a lost trial puts R and
// compressions back as they were before the jump.
func TestJumpTrialInPool(t *testing.T) {
	p, read := manualPool(t, 9)
	c := &p.ctl
	for i := 0; i < 20; i++ {
		read()
	}
	fast := window{cost: 1, n: 1e12, wall: 1e9} // no trial beats it
	c.mu.Lock()
	c.warm = true
	c.mem, _ = p.memory()
	c.tDisk = ewma{v: 100e3, valid: true}
	c.tComp = ewma{v: 40e3, valid: true}
	fillRecent(c, fast)
	p.compressing.Store(true)
	c.applyShare(p, c.startJump(0.9, 0.2, true))
	c.mu.Unlock()
	if p.Share() != 0.2 {
		t.Fatalf("a jump's trial: R %.2f, want 0.2", p.Share())
	}
	// The gate's windows hold a whole turnover of compressions that no
	// image hit paid for: its next judgement switches compressions off.
	c.mu.Lock()
	c.gateDem, c.gateHits = 1<<40, 0
	c.mu.Unlock()
	read()
	p.adjust()
	if p.compressing.Load() || !c.trial.active {
		t.Fatalf("in a jump's settle: compressing %v, trial %v; want the gate to have switched compressions off", p.compressing.Load(), c.trial.active)
	}
	// Once per settle: windows that would switch them back on are not
	// judged (with few images left after a jump its windows are short,
	// and it flapped).
	c.mu.Lock()
	c.gateSkipped, c.gateConMiss = 1<<20, 1<<40 // misses the images would serve, far beyond what compressions cost
	c.tHitC, c.tMiss = ewma{v: 10e3, valid: true}, ewma{v: 1e6, valid: true}
	c.mu.Unlock()
	read()
	p.adjust()
	if p.compressing.Load() {
		t.Fatal("in a jump's settle, the gate having switched once: compressions back on, want them left off")
	}
	intervals := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.trial.intervals
	}
	for intervals() < trialSettle {
		read()
		p.adjust()
	}
	// In the measured window the gate judges nothing, whatever its
	// windows hold.
	p.compressing.Store(true)
	c.mu.Lock()
	c.gateDem, c.gateHits = 1<<40, 0
	c.mu.Unlock()
	read()
	p.adjust()
	if !p.compressing.Load() || !c.trial.active {
		t.Fatalf("in a jump's measured window: compressing %v, trial %v; want the gate idle, compressions on", p.compressing.Load(), c.trial.active)
	}
	p.compressing.Store(false) // as the gate left them in the settle
	for c.trial.active {
		read()
		p.adjust()
	}
	if !p.compressing.Load() || p.Share() != 0.9 || c.trial.arms[armJump].kept != 0 {
		t.Fatalf("a lost jump's trial: compressing %v, R %.2f, kept %d; want compressions back on, R 0.9, none kept",
			p.compressing.Load(), p.Share(), c.trial.arms[armJump].kept)
	}
	if st := p.Stats(); st.ControllerTrials != 1 || st.JumpsKept != 0 {
		t.Fatalf("Stats: %d trials, %d jumps kept; want 1, 0", st.ControllerTrials, st.JumpsKept)
	}
}
