package bufferpool

import (
	"testing"
	"time"
)

// copyEv is a decision's evidence in the copy regime: pages keep their
// read images (no demotion compresses) and images serve 30% of the
// accesses.
var copyEv = evidence{hitsU: 600, hitsC: 300, misses: 100, frameEvictions: 100, demotions: 100}

// startFramesTrial drives controller c through the steady window at R r
// and trialPatience decisions from r to r+step on evidence ev (which
// wanted R up or not), with demotions compressing, and reports the R
// after the last decision.
func startFramesTrial(c *controller, r, step float64, wantedUp bool, ev evidence, now time.Time) float64 {
	const alpha = 0.5
	for i := 0; i < trialSettle+trialMeasure; i++ {
		c.trial.observeSteady(beforeWin, r)
	}
	next := r
	for i := 0; i < trialPatience; i++ {
		c.trial.observeSteady(beforeWin, r)
		if next = c.considerTrial(r, r+step, alpha, ev, wantedUp, true, now); c.trial.active {
			break
		}
	}
	return next
}

// finishTrial feeds the running trial win every interval until it ends
// and returns the R it leaves; while it runs R must stay at the trial's.
func finishTrial(t *testing.T, c *controller, win window, now time.Time) float64 {
	t.Helper()
	share := c.trial.share
	for i := 0; i < 2*(trialSettle+trialMeasure); i++ {
		r, ran := c.observeTrial(win, now)
		if !ran {
			t.Fatal("no trial ran")
		}
		if !c.trial.active {
			return r
		}
		if r != share {
			t.Fatalf("interval %d of a %v trial: R %.2f, want its %.2f", i, c.trial.arm, r, share)
		}
	}
	t.Fatal("the trial did not end")
	return 0
}

// TestFramesTrialLeavesImages: where images serve a tenth of the accesses
// or more and the climb has settled, the controller tries frames alone (R
// = MinShare, no compressing demotion; JSON events at 0.5× with 16 KiB
// pages ran 1.4× faster so than at the R 0.95 the climb kept), keeps
// them only when they clearly win twice in a row, and holds them: no decision until the
// hold ends. A tie, a climb still raising R, or images that serve little
// start no trial, or keep none.
func TestFramesTrialLeavesImages(t *testing.T) {
	start := time.Unix(1000, 0)
	c := testController()
	if r := startFramesTrial(c, 0.9, 0, false, copyEv, start); r != c.minShare || !c.trial.active || c.trial.arm != armFrames {
		t.Fatalf("copy regime, images serving 30%%, climb settled: R %.2f, trial %v arm %d; want a frames trial at %.2f", r, c.trial.active, c.trial.arm, c.minShare)
	}
	if !c.trial.framesOnly(start) {
		t.Fatal("a frames trial runs: want the frames regime in force (no compressing demotion)")
	}
	faster := window{cost: 150e3, n: 1300, wall: 100e6} // 1.3× the rate, each access slower by wall time
	// A first clear win goes back, and is tried again at once (no
	// back-off); the second keeps frames alone.
	if r := finishTrial(t, c, faster, start); r != 0.9 || c.trial.arms[armFrames].kept != 0 || c.trial.framesOnly(start) {
		t.Fatalf("frames 1.3× faster, first trial: R %.2f after it, kept %d, frames regime %v; want back to 0.9, none kept", r, c.trial.arms[armFrames].kept, c.trial.framesOnly(start))
	}
	if r := startFramesTrial(c, 0.9, 0, false, copyEv, start.Add(time.Second)); r != c.minShare || !c.trial.active {
		t.Fatalf("after a first win: R %.2f, trial %v; want the confirming trial at once", r, c.trial.active)
	}
	if r := finishTrial(t, c, faster, start); r != c.minShare || c.trial.arms[armFrames].kept != 1 {
		t.Fatalf("frames 1.3× faster twice: R %.2f after the trial, kept %d; want MinShare kept", r, c.trial.arms[armFrames].kept)
	}
	if !c.trial.framesHeld(start.Add(trialBackoff-time.Second)) || c.trial.framesHeld(start.Add(trialBackoff)) {
		t.Error("after a kept frames trial: want frames alone held for trialBackoff, then released")
	}
	if !c.trial.framesOnly(start.Add(time.Second)) || c.trial.framesOnly(start.Add(2*trialBackoff)) {
		t.Error("framesOnly after a kept frames trial: want it within the hold only")
	}

	// A tie (same rate, same time per access) after a first win keeps
	// the R before and waits out the back-off.
	c = testController()
	startFramesTrial(c, 0.9, 0, false, copyEv, start)
	finishTrial(t, c, faster, start)
	startFramesTrial(c, 0.9, 0, false, copyEv, start)
	if r := finishTrial(t, c, beforeWin, start); r != 0.9 || c.trial.arms[armFrames].kept != 0 {
		t.Fatalf("frames alone faster, then as fast as R 0.9: R %.2f after the trial, want back to 0.9", r)
	}
	if c.trial.framesOnly(start) {
		t.Error("after a lost frames trial: the frames regime is still in force")
	}
	if r := startFramesTrial(c, 0.9, 0, false, copyEv, start.Add(trialBackoff/2)); c.trial.active || r != 0.9 {
		t.Fatalf("within the back-off after a lost frames trial: R %.2f, trial %v; want none", r, c.trial.active)
	}
	if startFramesTrial(c, 0.9, 0, false, copyEv, start.Add(trialBackoff+time.Second)); !c.trial.active {
		t.Fatal("after the back-off: want a new frames trial")
	}
	if r := finishTrial(t, c, faster, start.Add(trialBackoff+time.Second)); r != 0.9 || c.trial.arms[armFrames].kept != 0 {
		t.Fatalf("a win after a lost confirmation: R %.2f, kept %d; want it confirmed before it is kept", r, c.trial.arms[armFrames].kept)
	}

	for _, tc := range []struct {
		name     string
		step     float64
		wantedUp bool
		ev       evidence
	}{
		{"the climb raising R", 0.05, true, copyEv},
		{"the climb wanting R up, on evidence too thin to step", 0, true, copyEv},
		{"images serving 5%", 0, false, evidence{hitsU: 900, hitsC: 50, misses: 50, frameEvictions: 100, demotions: 100}},
		{"no access", 0, false, evidence{}},
	} {
		c := testController()
		if r := startFramesTrial(c, 0.5, tc.step, tc.wantedUp, tc.ev, start); c.trial.active {
			t.Errorf("%s: a trial started (R %.2f)", tc.name, r)
		}
		if c.trial.stuck[armFrames] != 0 {
			t.Errorf("%s: %d decisions counted towards a frames trial, want none", tc.name, c.trial.stuck[armFrames])
		}
	}
	// At the maximum R the climb may want R up for ever: that holds back
	// no frames trial.
	c = testController()
	if r := startFramesTrial(c, 1-c.minShare, 0, true, copyEv, start); !c.trial.active || c.trial.arm != armFrames || r != c.minShare {
		t.Errorf("R at its maximum, the climb wanting it up: R %.2f, trial %v arm %d; want a frames trial", r, c.trial.active, c.trial.arm)
	}
	// Compressions off (the gate's), R well above MinShare: frames alone
	// differ, and are tried.
	c = testController()
	for i := 0; i < trialSettle+trialMeasure+trialPatience && !c.trial.active; i++ {
		c.trial.observeSteady(beforeWin, 0.5)
		c.considerTrial(0.5, 0.5, 0.5, copyEv, false, false, start)
	}
	if !c.trial.active || c.trial.arm != armFrames {
		t.Error("R 0.5, compressions off, images serving 30%: want a frames trial")
	}
	// Already close to frames alone (R at MinShare, compressions off): a
	// trial would compare the regime with itself.
	c = testController()
	for i := 0; i < trialSettle+trialMeasure+2*trialPatience; i++ {
		c.trial.observeSteady(beforeWin, c.minShare)
		c.considerTrial(c.minShare, c.minShare, 0.5, copyEv, false, false, start)
	}
	if c.trial.active {
		t.Error("at MinShare with compressions off: a frames trial started")
	}
}

// TestFramesTrialClearWin: the frames arm is kept only on a clear win: a
// rate higher by more than trialMargin, or, where the rates tie (or a
// window was idle), a time per access lower by more than trialMargin. A
// tie, which keeps the copy arm, does not keep it.
func TestFramesTrialClearWin(t *testing.T) {
	for _, tc := range []struct {
		name   string
		during window
		want   bool
	}{
		{"more accesses a second, each slower by wall time", window{cost: 150e3, n: 1300, wall: 100e6}, true},
		{"fewer accesses a second, each faster by wall time", window{cost: 50e3, n: 800, wall: 100e6}, false},
		{"same rate, faster per access by 10%", window{cost: 90e3, n: 1000, wall: 100e6}, true},
		{"same rate, faster per access by 3%", window{cost: 97e3, n: 1000, wall: 100e6}, false},
		{"same rate and time per access", beforeWin, false},
		{"an idle interval, faster per access by 10%", window{cost: 90e3, n: 1000, wall: 100e6, idle: 1}, true},
		// An idle interval: the rate measures the load, not the pool.
		{"an idle interval, more accesses a second, each slower", window{cost: 150e3, n: 1300, wall: 100e6, idle: 1}, false},
		{"no accesses", window{wall: 100e6}, false},
	} {
		if got := tc.during.clearlyBeats(beforeWin); got != tc.want {
			t.Errorf("%s: clearlyBeats %v, want %v", tc.name, got, tc.want)
		}
	}
	if !beforeWin.beats(beforeWin) || beforeWin.clearlyBeats(beforeWin) {
		t.Error("a tie: want beats (the copy arm kept) and not clearlyBeats")
	}
}

// TestFramesTrialEndsCopyHold: where both arms may pay (below the floor,
// every demotion compressing, images serving 30%) the copy arm is tried
// first; when it loses, the frames arm is tried within the copy arm's
// back-off. A kept copy trial holds R, and a frames trial kept after it
// ends that hold.
func TestFramesTrialEndsCopyHold(t *testing.T) {
	const alpha = 0.5
	start := time.Unix(1000, 0)
	both := evidence{hitsU: 600, hitsC: 300, misses: 100, frameEvictions: 100, demotions: 100, compressions: 100}
	c := testController()
	if startFramesTrial(c, 0.3, 0, false, both, start); !c.trial.active || c.trial.arm != armCopy {
		t.Fatal("exclusive regime, images serving 30%: want the copy arm first")
	}
	for c.trial.active {
		c.observeTrial(window{cost: 150e3, n: 1000, wall: 100e6}, start) // slower: lost
	}
	if r := startFramesTrial(c, 0.3, 0, false, both, start.Add(time.Second)); !c.trial.active || c.trial.arm != armFrames || r != c.minShare {
		t.Fatalf("after a lost copy trial, within its back-off: R %.2f, trial %v arm %d; want a frames trial", r, c.trial.active, c.trial.arm)
	}

	c = testController()
	if r := startFramesTrial(c, 0.3, 0, false, both, start); !c.trial.active || c.trial.arm != armCopy || r != 1-c.minShare {
		t.Fatalf("exclusive regime, images serving 30%%: R %.2f, arm %d; want the copy arm first", r, c.trial.arm)
	}
	for c.trial.active {
		c.observeTrial(window{cost: 60e3, n: 1000, wall: 100e6}, start)
	}
	if !c.trial.holding(start) {
		t.Fatal("a kept copy trial does not hold R")
	}
	if startFramesTrial(c, 0.95, 0, false, copyEv, start); !c.trial.active || c.trial.arm != armFrames {
		t.Fatal("copy regime after a kept copy trial: want a frames trial")
	}
	finishTrial(t, c, window{cost: 150e3, n: 1300, wall: 100e6}, start)
	if !c.trial.holding(start) {
		t.Fatal("a first frames win (not yet kept) ended the copy hold")
	}
	startFramesTrial(c, 0.95, 0, false, copyEv, start)
	finishTrial(t, c, window{cost: 150e3, n: 1300, wall: 100e6}, start)
	if c.trial.holding(start) || !c.trial.framesHeld(start) {
		t.Error("after a kept frames trial: want the frames hold, not the copy hold")
	}
	if f, cp := c.trial.arms[armFrames].keptUntil, c.trial.arms[armCopy].notBefore; cp.Before(f.Add(trialBackoff)) {
		t.Errorf("after a kept frames trial: the copy arm may be tried %v after the hold ends, want a back-off (%v) at least", cp.Sub(f), trialBackoff)
	}
}

// TestFramesTrialSwitchesCompressionInPool drives a pool's own adjust
// through frames trials: compressing demotions go off with the trial. A
// lost one gives them back as they were before it (on or off) with the R
// before it; a kept one keeps them off through its hold, in which the
// controller gathers no evidence and takes no step, and after it (the
// gate judges from there); SetShare ends a hold at once.
func TestFramesTrialSwitchesCompressionInPool(t *testing.T) {
	p, read := manualPool(t, 7)
	c := &p.ctl
	// runTrial runs a frames trial from R 0.9 judged against before,
	// with demotions compressing or not before it.
	runTrial := func(before window, compressing bool) {
		t.Helper()
		read()
		p.compressing.Store(compressing)
		forceFramesTrial(c, 0.9, before)
		p.adjust()
		if p.compressing.Load() || p.Share() != p.opts.MinShare {
			t.Fatalf("during a frames trial: compressing %v, R %.2f; want off at MinShare", p.compressing.Load(), p.Share())
		}
		for c.trial.active {
			read()
			p.adjust()
		}
	}
	slow := window{cost: 1e12, n: 1, wall: 1e9} // one access a second: any trial beats it
	fast := window{cost: 1, n: 1e12, wall: 1e9} // no trial beats it
	for _, was := range []bool{true, false} {
		runTrial(fast, was)
		if p.compressing.Load() != was || p.Share() != 0.9 {
			t.Fatalf("a lost frames trial, compressing %v before: compressing %v, R %.2f after; want as before, R 0.9", was, p.compressing.Load(), p.Share())
		}
	}
	runTrial(slow, true)
	if !p.compressing.Load() || p.Share() != 0.9 {
		t.Fatalf("a first won frames trial: compressing %v, R %.2f after it; want on, R 0.9 (it is confirmed before it is kept)", p.compressing.Load(), p.Share())
	}
	runTrial(slow, true)
	st := p.Stats()
	if st.FramesTrialsKept != 1 || st.FramesTrials != 4 {
		t.Fatalf("frames trials %d, kept %d; want 4, 1 kept", st.FramesTrials, st.FramesTrialsKept)
	}
	steps := st.ControllerSteps
	// decided: whether adjust decided or gathered evidence for a decision
	// (decide sets lastLossU).
	decided := func() bool {
		c.mu.Lock()
		c.lastLossU = -1
		c.mu.Unlock()
		read()
		p.adjust()
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.lastLossU >= 0 || c.pend.accesses() > 0
	}
	for i := 0; i < 20; i++ {
		if decided() {
			t.Fatal("within the hold: the controller decided, or gathered evidence for a decision")
		}
	}
	if st := p.Stats(); p.compressing.Load() || st.Share != p.opts.MinShare || st.ControllerSteps != steps {
		t.Fatalf("within the hold: compressing %v, R %.2f, %d steps; want off, MinShare, none", p.compressing.Load(), st.Share, st.ControllerSteps-steps)
	}
	c.mu.Lock()
	c.trial.arms[armFrames].keptUntil = time.Now().Add(-time.Second)
	c.mu.Unlock()
	if !decided() || p.compressing.Load() {
		t.Fatalf("the hold ended: compressing %v; want off, and the controller deciding again", p.compressing.Load())
	}
	c.mu.Lock()
	c.trial.arms[armFrames].keptUntil = time.Now().Add(time.Hour)
	c.mu.Unlock()
	p.adjust()
	p.SetShare(0.5)
	if c.trial.framesHeld(time.Now()) || !p.compressing.Load() {
		t.Fatal("SetShare: want the hold ended and compressing demotions on")
	}
}

// TestDecisionReportsWantedUp: a decision records whether it wanted R up
// (the frames arm waits while it does), whether it stepped or not, and a
// decision that wants R down clears it.
func TestDecisionReportsWantedUp(t *testing.T) {
	const alpha = 0.5
	c := testController()
	if r := c.decide(0.5, 0.5, alpha, fullMem, ghosts(0, 200)); r <= 0.5 || !c.wantedUp {
		t.Fatalf("the compressed ghost winning: R %.2f, wantedUp %v; want up, and wantedUp", r, c.wantedUp)
	}
	if r := c.decide(0.5, 0.5, alpha, fullMem, ghosts(200, 0)); r >= 0.5 || c.wantedUp {
		t.Fatalf("the frames' ghost winning: R %.2f, wantedUp %v; want down, and not wantedUp", r, c.wantedUp)
	}
}

// TestFramesTrialConfirmedInARow: a first frames win is confirmed only by
// the next frames trial from about the same R, with nothing between them
// that measured another regime or stopped the arm from qualifying, and
// the confirming trial must beat the window before the first as well as
// its own (which may be the refill after the first).
func TestFramesTrialConfirmedInARow(t *testing.T) {
	start := time.Unix(1000, 0)
	faster := window{cost: 150e3, n: 1300, wall: 100e6}
	firstWin := func() *controller {
		t.Helper()
		c := testController()
		startFramesTrial(c, 0.9, 0, false, copyEv, start)
		if r := finishTrial(t, c, faster, start); r != 0.9 || !c.trial.arms[armFrames].confirming {
			t.Fatalf("a first frames win: R %.2f, confirming %v; want back at 0.9, confirming", r, c.trial.arms[armFrames].confirming)
		}
		return c
	}
	kept := func(c *controller) bool { return c.trial.arms[armFrames].kept != 0 }

	// A copy trial between the two.
	c := firstWin()
	both := evidence{hitsU: 600, hitsC: 300, misses: 100, frameEvictions: 100, demotions: 100, compressions: 100}
	if startFramesTrial(c, 0.3, 0, false, both, start); !c.trial.active || c.trial.arm != armCopy {
		t.Fatal("below the floor, compressing: want a copy trial")
	}
	r := 0.0
	for c.trial.active {
		r, _ = c.observeTrial(beforeWin, start)
	}
	if r != 0.95 {
		t.Fatalf("a copy trial with compressions on, a tie: R %.2f after it, want 0.95 kept", r)
	}
	later := start.Add(trialBackoff + time.Second) // the abandoned confirmation's back-off
	startFramesTrial(c, 0.9, 0, false, copyEv, later)
	if finishTrial(t, c, faster, later); kept(c) {
		t.Error("a frames win after a first win and a copy trial: kept, want it confirmed first")
	}

	// A decision in which the frames arm did not qualify, during the
	// refill after the first win (the steady window not yet full): the
	// confirmation stands; once settled: it is abandoned, and the next
	// trial waits out the back-off.
	c = firstWin()
	c.considerTrial(0.9, 0.95, 0.5, copyEv, true, true, start) // the climb wanting R up
	if !c.trial.arms[armFrames].confirming {
		t.Error("a decision wanting R up during the refill after a first win: the confirmation was abandoned")
	}
	for i := 0; i < trialSettle+trialMeasure; i++ {
		c.trial.observeSteady(beforeWin, 0.9)
	}
	c.considerTrial(0.9, 0.95, 0.5, copyEv, true, true, start)
	if startFramesTrial(c, 0.9, 0, false, copyEv, start.Add(time.Second)); c.trial.active {
		t.Fatal("an abandoned confirmation: a frames trial within the back-off")
	}
	if startFramesTrial(c, 0.9, 0, false, copyEv, later); !c.trial.active {
		t.Fatal("an abandoned confirmation: no frames trial after the back-off")
	}
	if finishTrial(t, c, faster, later); kept(c) {
		t.Error("a frames win after a first win and a decision wanting R up: kept, want it confirmed first")
	}

	// A confirming trial from another R.
	c = firstWin()
	startFramesTrial(c, 0.5, 0, false, copyEv, later)
	if finishTrial(t, c, faster, later); kept(c) {
		t.Error("a frames win from R 0.5 after a first win from 0.9: kept, want it confirmed first")
	}

	// The window before the confirming trial is a refill (800 accesses an
	// interval): the trial beats it, not the window before the first.
	c = firstWin()
	refill := window{cost: 100e3, n: 800, wall: 100e6}
	for i := 0; i < trialSettle+trialMeasure; i++ {
		c.trial.observeSteady(refill, 0.9)
	}
	for i := 0; i < trialPatience && !c.trial.active; i++ {
		c.trial.observeSteady(refill, 0.9)
		c.considerTrial(0.9, 0.9, 0.5, copyEv, false, true, start)
	}
	if !c.trial.active || c.trial.arm != armFrames {
		t.Fatal("after a first win: want the confirming frames trial")
	}
	if r := finishTrial(t, c, beforeWin, start); r != 0.9 || kept(c) {
		t.Errorf("a confirming trial beating only the refill before it: R %.2f, kept %v; want back at 0.9, not kept", r, kept(c))
	}

	// Confirmed: kept.
	c = firstWin()
	startFramesTrial(c, 0.9, 0, false, copyEv, start)
	if r := finishTrial(t, c, faster, start); r != c.minShare || !kept(c) {
		t.Errorf("two frames wins in a row: R %.2f, kept %v; want MinShare kept", r, kept(c))
	}
}

// TestFramesTrialByModel: where document 000's model says frames alone
// win (framesByModel: at α 0.5, T_decom above 1.25 × T_disk_read; here the
// NVMe + deflate-6 scenario's 65 and 26 µs), a frames trial starts
// although the climb wants R up, and one clear win keeps it, unless the
// costs measured by its end no longer say so; where the model says images
// pay (testController's costs), the same climb holds the arm back, and a
// first win only goes back to be confirmed.
func TestFramesTrialByModel(t *testing.T) {
	start := time.Unix(1000, 0)
	faster := window{cost: 150e3, n: 1300, wall: 100e6}
	c := testController()
	c.tDisk.v, c.tDecom.v = float64(26*time.Microsecond), float64(65*time.Microsecond)
	if !c.framesByModel(0.5) {
		t.Fatal("T_decom 65 µs, T_disk_read 26 µs, α 0.5: the model does not favour frames")
	}
	if startFramesTrial(c, 0.5, 0.01, true, copyEv, start); !c.trial.active || c.trial.arm != armFrames {
		t.Fatal("the model favouring frames, the climb wanting R up: no frames trial")
	}
	if r := finishTrial(t, c, faster, start); r != c.minShare || c.trial.arms[armFrames].kept != 1 {
		t.Fatalf("the model favouring frames, one clear win: R %.2f, kept %d; want MinShare, kept", r, c.trial.arms[armFrames].kept)
	}

	// The trial's own misses measured T_disk_read higher: the model no
	// longer favours frames at its end, and the first win is confirmed.
	c = testController()
	c.tDisk.v, c.tDecom.v = float64(26*time.Microsecond), float64(65*time.Microsecond)
	startFramesTrial(c, 0.5, 0, false, copyEv, start)
	c.tDisk.v = float64(60 * time.Microsecond)
	if r := finishTrial(t, c, faster, start); r != 0.5 || c.trial.arms[armFrames].kept != 0 {
		t.Fatalf("the model favouring frames at the start only, one clear win: R %.2f, kept %d; want back at 0.5 to confirm", r, c.trial.arms[armFrames].kept)
	}

	c = testController()
	if c.framesByModel(0.5) {
		t.Fatal("T_decom 20 µs, T_disk_read 100 µs: the model favours frames")
	}
	if startFramesTrial(c, 0.5, 0.01, true, copyEv, start); c.trial.active {
		t.Fatal("the model favouring images, the climb wanting R up: a frames trial started")
	}
	c = testController()
	startFramesTrial(c, 0.5, 0, false, copyEv, start)
	if r := finishTrial(t, c, faster, start); r != 0.5 || c.trial.arms[armFrames].kept != 0 {
		t.Fatalf("the model favouring images, one clear win: R %.2f, kept %d; want back at 0.5 to confirm", r, c.trial.arms[armFrames].kept)
	}
}

// forceFramesTrial starts a frames trial from R from, judged against the
// window before, in a warm pool's controller (the next adjust runs it),
// recording what its return waits for from c.mem as considerTrial does.
func forceFramesTrial(c *controller, from float64, before window) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.warm = true
	c.trial.active, c.trial.arm, c.trial.from, c.trial.before = true, armFrames, from, before
	c.trial.share = c.share(armFrames)
	// Not by the model: the tests that force a trial judge the two wins in
	// a row, whatever their pools measure (TestFramesTrialByModel has the
	// model's case).
	c.trial.byModel = false
	c.trial.refillFrom(c.mem)
	c.trial.intervals, c.trial.during = 0, window{}
	c.trial.arms[armFrames].tried++
}
