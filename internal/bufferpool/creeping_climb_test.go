package bufferpool

import (
	"testing"
	"time"
)

// TestCreepingClimbStalls: a climb whose sides are level within their
// noise wins a small step up now and then and creeps; it is stalled, not
// finding, and where document 000's model says images do not pay it no
// longer holds the frames arm back (mayPay). The decisions replayed are a
// 35-decision stretch of a controller trace of the NVMe + deflate-6
// scenario with skewed keys and decompressions twice as slow as reads
// (strata pool-sweep --read-latency 40us): R crept from 0.483 to 0.569 in
// 7 s with images serving a third of the accesses, where frames alone
// read 1.1× faster. Counting only the decisions after which R did not
// move at all (the rule before), the count started anew at every small
// step and never reached trialPatience (at most 6 decisions wanting R up
// between moves). A climb that finds, stepping in a row, still holds the
// arm back, from the smallest step on.
func TestCreepingClimbStalls(t *testing.T) {
	const alpha = 0.36
	borderline := borderlineControllers(t, alpha, 47*time.Microsecond, 90*time.Microsecond,
		memState{frameBytes: 2 << 20, imageBytes: 2 << 20, resident: 4 << 20, avail: 4 << 20, budget: 4 << 20})
	// Images serve a third of the accesses, deeper than frames alone reach.
	ev := evidence{hitsU: 400, hitsC: 700, misses: 1000, frameEvictions: 100, demotions: 100, depth: depthAt(1.5, 700)}
	type decision struct {
		r        float64 // R after the decision
		wantedUp bool
	}
	// The trace's decisions after the warm-up's first (R, and whether it
	// wanted R up): small steps up among thin and level decisions.
	creep := []decision{
		{0.483, false}, {0.483, false}, {0.483, false}, {0.483, true}, {0.483, false},
		{0.483, false}, {0.483, false}, {0.483, true}, {0.483, true}, {0.505, true},
		{0.505, false}, {0.505, false}, {0.505, false}, {0.522, true}, {0.522, false},
		{0.522, false}, {0.522, false}, {0.522, false}, {0.522, true}, {0.522, true},
		{0.522, false}, {0.522, true}, {0.522, false}, {0.522, false}, {0.522, false},
		{0.522, false}, {0.522, true}, {0.522, true}, {0.522, false}, {0.522, false},
		{0.522, true}, {0.528, true}, {0.528, false}, {0.528, false}, {0.528, false},
	}
	c := borderline()
	prev, first := 0.483, -1
	for i, d := range creep {
		c.wantedUp = d.wantedUp
		c.countStall(prev, d.r)
		prev = d.r
		if d.wantedUp && first < 0 && c.mayPay(d.r, d.r, alpha, ev, true, true, time.Time{})[armFrames] {
			first = i
		}
	}
	// The eighth decision that wanted R up (the first counts from 0.483,
	// where the count begins) is the first that no longer holds the arm
	// back.
	if first != 21 {
		t.Fatalf("the first decision wanting R up that let the frames arm count was %d of the creep, want 21 (stalled %d)", first, c.upStalled)
	}

	// A climb that finds: from the smallest step, a step up at every
	// decision (the step growing by 1.25× each), and then with two thin
	// decisions after every second step. Counted by its drift alone, the
	// second would stall after four steps (+0.029).
	for _, thins := range []int{0, 2} {
		c = borderline()
		c.step = minStep
		r := 0.40
		c.countStall(0.40, r)
		for k := 1; k <= 24 && r < 0.9; k++ {
			next := r + c.step
			c.step = min(maxStep, c.step*1.25)
			c.wantedUp = true
			c.countStall(r, next)
			if c.mayPay(next, next, alpha, ev, true, true, time.Time{})[armFrames] {
				t.Fatalf("%d thin decisions after every second step: the frames arm may pay at R %.3f during a climb that finds (stalled %d)", thins, next, c.upStalled)
			}
			r = next
			for j := 0; k%2 == 0 && j < thins; j++ {
				c.countStall(r, r) // thin: wanted R up, no step
				if c.mayPay(r, r, alpha, ev, true, true, time.Time{})[armFrames] {
					t.Fatalf("%d thin decisions after every second step: the frames arm may pay at R %.3f during a climb that finds (stalled %d)", thins, r, c.upStalled)
				}
			}
		}
	}
}
