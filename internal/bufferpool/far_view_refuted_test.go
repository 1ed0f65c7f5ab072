package bufferpool

import (
	"testing"
	"time"
)

// shallowHits is evidence whose image hits all lie an eighth of the memory
// below the frames: the far view predicts that larger frames serve them,
// and jumps.
func shallowHits() evidence {
	ev := evidence{hitsU: 8000, hitsC: 1000, misses: 10, frameEvictions: 1000, demotions: 1000}
	ev.depth[depthScale/8] = 1000
	return ev
}

func farViewController(now time.Time) *controller {
	c := testController()
	c.tHitC = ewma{v: 20e3, valid: true}
	c.tMiss = ewma{v: 100e3, valid: true}
	c.now = now
	return c
}

// TestFarViewRefuted: a jump of the far view that the climb takes back up
// a third of the way, or that the far view wants to repeat while it is
// watched, suspends the far view for a back-off (cached sysbench writes at
// 0.5× the memory: the climb raised R from 0.05 to 0.45 in two seconds and
// the far view jumped back down, over and over). A jump the climb leaves
// alone does not.
func TestFarViewRefuted(t *testing.T) {
	now := time.Unix(1000, 0)
	const from = 0.9
	jump := func(c *controller, r float64) float64 {
		t.Helper()
		jumps := c.jumps
		to := c.decide(r, r, 0.5, fullMem, shallowHits())
		if c.jumps != jumps+1 || to >= r {
			t.Fatalf("shallow image hits at R %.2f: R %.2f after %d jumps, want a jump down", r, to, c.jumps-jumps)
		}
		return to
	}
	quiet := evidence{} // no accesses: no far view, no step
	wantsNoJump := func(c *controller, r float64, what string) {
		t.Helper()
		jumps := c.jumps
		if c.decide(r, r, 0.5, fullMem, shallowHits()); c.jumps != jumps {
			t.Errorf("%s: the far view jumped", what)
		}
	}

	t.Run("climbed back", func(t *testing.T) {
		c := farViewController(now)
		to := jump(c, from)
		back := to + (from-to)/3 + 0.01
		c.decide(back, back, 0.5, fullMem, quiet)
		wantsNoJump(c, from, "after the climb took R back up")
		c.now = now.Add(trialBackoff + time.Second)
		jump(c, from) // the back-off is over
		// Refuted again in a row: twice the back-off.
		c.decide(from, from, 0.5, fullMem, quiet)
		c.now = c.now.Add(trialBackoff + time.Second)
		wantsNoJump(c, from, "a minute after a second refutation in a row")
	})

	t.Run("jumps back down", func(t *testing.T) {
		c := farViewController(now)
		to := jump(c, from)
		// The climb raised R a little, and the far view wants down again.
		up := to + 0.02
		wantsNoJump(c, up, "a second jump after the climb raised R")
		if !c.now.Before(c.far.offUntil) {
			t.Errorf("the far view is not suspended after it wanted back down")
		}
	})

	t.Run("jumps further down", func(t *testing.T) {
		c := farViewController(now)
		to := jump(c, from)
		next := jump(c, to) // from where the first left R: not a refutation
		// Watched from the first jump's top: a climb back above a third
		// of the whole way refutes both.
		back := next + (from-next)/3 + 0.01
		c.decide(back, back, 0.5, fullMem, quiet)
		if !c.now.Before(c.far.offUntil) {
			t.Errorf("a climb back to %.2f after jumps %.2f → %.2f → %.2f refuted nothing", back, from, to, next)
		}
	})

	t.Run("stood", func(t *testing.T) {
		c := farViewController(now)
		to := jump(c, from)
		back := to + (from-to)/3 + 0.01
		c.decide(back, back, 0.5, fullMem, quiet) // refuted: a minute off
		c.now = now.Add(trialBackoff + time.Second)
		to = jump(c, from)
		for range jumpWatchDecisions {
			c.decide(to, to, 0.5, fullMem, quiet)
		}
		if c.far.backoff != 0 {
			t.Errorf("a jump that stood left the back-off at %v", c.far.backoff)
		}
		jump(c, from) // a new workload: the far view still acts
	})

	t.Run("the doubling starts anew", func(t *testing.T) {
		c := farViewController(now)
		to := jump(c, from)
		back := to + (from-to)/3 + 0.01
		c.decide(back, back, 0.5, fullMem, quiet) // a minute off
		// Long after the suspension ended, refuted again: a minute again.
		c.now = now.Add(10 * trialBackoff)
		to = jump(c, from)
		c.decide(back, back, 0.5, fullMem, quiet)
		if c.far.backoff != trialBackoff {
			t.Errorf("refuted long after the last suspension ended: off for %v, want %v", c.far.backoff, trialBackoff)
		}
	})
}

// TestFarViewWatchUndoneWithTheJump: a jump that a pending frames
// confirmation holds back (holdsR) is not watched: R never moved, so the
// climb cannot refute it.
func TestFarViewWatchUndoneWithTheJump(t *testing.T) {
	c := farViewController(time.Unix(1000, 0))
	f := &c.trial.arms[armFrames]
	f.confirming, f.holds = true, true
	c.pend = shallowHits()
	if r := c.climb(0.9, 0.9, 0.5, fullMem); r != 0.9 {
		t.Fatalf("R %.2f with a confirmation holding it, want 0.90", r)
	}
	if c.far.watch != 0 {
		t.Errorf("a jump held back is watched (%d decisions)", c.far.watch)
	}
	c.pend = evidence{}
	c.climb(0.9, 0.9, 0.5, fullMem)
	if !c.far.offUntil.IsZero() {
		t.Errorf("a jump held back was refuted")
	}
}
