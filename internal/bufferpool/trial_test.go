package bufferpool

import (
	"testing"
	"time"
)

// TestControllerTrialLeavesExclusiveRegime: stuck below the copies floor
// (images under their share, never evicted, every demotion compressing)
// with no step for trialPatience decisions, the controller tries R = 1 −
// MinShare, measures it, and keeps it when it is faster; when it is
// slower it goes back and does not try again for trialBackoff.
func TestControllerTrialLeavesExclusiveRegime(t *testing.T) {
	const alpha, usage = 0.5, 0.2
	stuckEv := evidence{hitsU: 900, hitsC: 100, frameEvictions: 100, demotions: 100, compressions: 100}
	start := time.Unix(1000, 0)
	run := func(c *controller, after float64, now time.Time) float64 {
		r := 0.3
		for i := 0; i < trialPatience; i++ {
			c.trial.sinceCost, c.trial.sinceN = 100e3, 1000 // 100 ns an access
			next := c.considerTrial(r, r, usage, alpha, stuckEv, now)
			if i < trialPatience-1 && next != r {
				t.Fatalf("decision %d in the stuck state: R %.2f, want it held until %d", i, next, trialPatience)
			}
			r = next
		}
		if r != 0.95 || !c.trial.active {
			t.Fatalf("after %d stuck decisions: R %.2f, trial %v; want a trial at 0.95", trialPatience, r, c.trial.active)
		}
		for i := 1; ; i++ {
			to, ran := c.observeTrial(after*1000, 1000, now)
			if !ran {
				t.Fatalf("interval %d: no trial ran", i)
			}
			if !c.trial.active {
				if i != trialSettle+trialMeasure {
					t.Fatalf("the trial ended after %d intervals, want %d", i, trialSettle+trialMeasure)
				}
				if _, ran := c.observeTrial(0, 0, now); ran {
					t.Fatal("a trial ran after the trial ended")
				}
				return to
			}
			if to != 0.95 {
				t.Fatalf("interval %d of the trial: R %.2f, want 0.95 held", i, to)
			}
		}
	}
	c := testController()
	if r := run(c, 60, start); r != 0.95 || c.trial.kept != 1 {
		t.Fatalf("faster at 0.95 (60 against 100 ns an access): R %.2f after the trial, kept %d; want 0.95 kept", r, c.trial.kept)
	}
	// After a kept trial the far view may not jump below the floor for
	// trialBackoff (it would price the hits it moves at the copy regime's
	// image-hit time); above the floor, or later, it may.
	if !c.trial.holdsFloor(0.1, alpha, start.Add(time.Second)) || c.trial.holdsFloor(0.5, alpha, start.Add(time.Second)) ||
		c.trial.holdsFloor(0.1, alpha, start.Add(2*trialBackoff)) {
		t.Error("holdsFloor after a kept trial: want a hold below the floor within trialBackoff only")
	}
	c = testController()
	if r := run(c, 150, start); r != 0.3 {
		t.Fatalf("slower at 0.95 (150 against 100 ns): R %.2f after the trial, want back to 0.3", r)
	}
	r := 0.3
	for i := 0; i < 2*trialPatience; i++ {
		c.trial.sinceCost, c.trial.sinceN = 100e3, 1000
		r = c.considerTrial(r, r, usage, alpha, stuckEv, start.Add(trialBackoff/2))
	}
	if r != 0.3 || c.trial.active {
		t.Fatalf("within the back-off after a failed trial: R %.2f, trial %v; want no new trial", r, c.trial.active)
	}
	// Not stuck: images evicted (they use their share), or demotions free.
	c = testController()
	for _, ev := range []evidence{
		{hitsC: 100, imageEvictions: 10, demotions: 100, compressions: 100},
		{hitsC: 100, demotions: 100, compressions: 10},
	} {
		r := 0.3
		for i := 0; i < 2*trialPatience; i++ {
			c.trial.sinceCost, c.trial.sinceN = 100e3, 1000
			r = c.considerTrial(r, r, usage, alpha, ev, start)
		}
		if r != 0.3 {
			t.Errorf("evidence %+v: a trial started (R %.2f)", ev, r)
		}
	}
}
