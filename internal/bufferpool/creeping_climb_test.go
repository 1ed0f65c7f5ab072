package bufferpool

import (
	"testing"
	"time"
)

// TestCreepingClimbStalls: a climb whose sides are level within their
// noise wins a small step up now and then and creeps; it is stalled, not
// finding, and where document 000's model says images do not pay it no
// longer holds the frames arm back (mayPay). The decisions replayed are
// those of the NVMe + deflate-6 scenario with skewed keys and reads half
// as slow as decompressions (strata pool-sweep --read-latency 40us, the
// controller's trace): R crept from 0.483 to 0.569 in 10 s with images
// serving a third of the accesses, where frames alone read 1.1× faster.
// Counting only the decisions after which R did not move at all, the
// count started anew at every small step and never reached
// trialPatience. A climb that finds (steps growing while the direction
// holds) still holds the arm back.
func TestCreepingClimbStalls(t *testing.T) {
	const alpha = 0.36
	borderline := func() *controller {
		c := testController()
		c.tDisk.v, c.tDecom.v = float64(47*time.Microsecond), float64(90*time.Microsecond)
		c.mem = memState{frameBytes: 2 << 20, imageBytes: 2 << 20, resident: 4 << 20, avail: 4 << 20, budget: 4 << 20}
		return c
	}
	if c := borderline(); c.framesByModel(alpha) || !c.imagesDoNotPay(alpha) {
		t.Fatal("the costs are not borderline: the model favours frames clearly, or images pay")
	}
	// Images serve a third of the accesses, deeper than frames alone reach.
	ev := evidence{hitsU: 400, hitsC: 700, misses: 1000, frameEvictions: 100, demotions: 100, depth: depthAt(1.5, 700)}
	type decision struct {
		r        float64 // R after the decision
		wantedUp bool
	}
	// The trace's decisions after the warm-up (R, and whether it wanted
	// R up): small steps up among thin and level decisions.
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
	c.upStallFrom = 0.483
	first := -1
	for i, d := range creep {
		c.wantedUp = d.wantedUp
		c.countStall(d.r)
		if c.mayPay(d.r, d.r, alpha, ev, d.wantedUp, true)[armFrames] && d.wantedUp && first < 0 {
			first = i
		}
	}
	if first < 0 {
		t.Fatalf("the creep from 0.483 to 0.528 never let the frames arm count a decision that wanted R up (stalled %d)", c.upStalled)
	}
	t.Logf("a decision that wanted R up counted for the frames arm after %d of the creep's %d decisions", first+1, len(creep))

	// A climb that finds: steps of 0.05 and more, each wanted.
	c = borderline()
	c.upStallFrom = 0.36
	for _, r := range []float64{0.41, 0.46, 0.53, 0.60, 0.70, 0.80, 0.90} {
		for k := 0; k < 2; k++ { // a thin decision between the steps
			c.wantedUp = true
			c.countStall(r)
			if c.mayPay(r, r, alpha, ev, true, true)[armFrames] {
				t.Fatalf("the frames arm may pay at R %.2f during a climb that finds (stalled %d)", r, c.upStalled)
			}
		}
	}
}
