package bufferpool

import "testing"

// TestFarViewWaitsForDepthsItWeighs: until the frames have evicted as many
// pages as the images reach (u/α of the page memory), the depth histogram
// is cut short and its image hits all look shallow, so the far view does
// not jump on them (sysbench range scans at 1× the memory: a jump half a
// second after the open took R from 0.5 to 0.10 and, with compressions
// switched off, to 0.05, 5× slower than R 0.94); after that it does.
func TestFarViewWaitsForDepthsItWeighs(t *testing.T) {
	if farViewReady(1.7, 0.9, 0.5) || !farViewReady(1.8, 0.9, 0.5) || farViewReady(5, 0.5, 0) {
		t.Fatal("farViewReady: want ready from u/α = 1.8 units of evictions, never without α")
	}
	shallow := func() *controller {
		c := testController()
		c.tHitC = ewma{v: 20e3, valid: true}
		c.tMiss = ewma{v: 100e3, valid: true}
		c.pend = evidence{hitsU: 8000, hitsC: 1000, misses: 10, frameEvictions: 1000, demotions: 1000}
		c.pend.depth[depthScale/8] = 1000 // an eighth of the memory below the frames
		return c
	}
	c := shallow()
	c.evictedUnits = 0.5 // half a page memory evicted so far
	if r := c.decidePending(0.9, 0.9, 0.5, fullMem); c.jumps != 0 || r < 0.8 {
		t.Fatalf("histogram cut short: R %.2f after %d jumps, want no jump", r, c.jumps)
	}
	c = shallow()
	c.evictedUnits = 2
	if r := c.decidePending(0.9, 0.9, 0.5, fullMem); c.jumps != 1 || r >= 0.9 {
		t.Fatalf("histogram whole: R %.2f after %d jumps, want a jump down", r, c.jumps)
	}
}
