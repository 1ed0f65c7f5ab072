package bufferpool

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestTrialReturnSettles: a trial that goes back leaves the images it
// dropped to refill as their pages miss, and those misses, on pages the
// frames evicted, look to the uncompressed ghost like what more frames
// would save. For trialSettle intervals after the return the controller
// neither decides nor gathers evidence nor runs the gate; then it does
// again. (Sysbench point reads at 0.5× the memory, 4 KiB pages: one step
// after a lost frames trial took R from 0.95 to the floor, 1.6% misses.)
func TestTrialReturnSettles(t *testing.T) {
	p, n := simPool(t, 2, hotSetBudget, -1, 0, func(o *Options) { o.ControllerInterval = time.Hour })
	rng := rand.New(rand.NewPCG(9, 10))
	c := &p.ctl
	read := func() {
		for i := 0; i < 200; i++ {
			readSimPage(t, p, PageID(rng.Uint64N(n)))
		}
	}
	read()
	forceFramesTrial(c, 0.9, window{cost: 1, n: 1e12, wall: 1e9}) // no trial beats the window before
	for c.trial.active {
		read()
		p.adjust()
	}
	if p.Share() != 0.9 {
		t.Fatalf("a lost frames trial: R %.2f after it, want 0.9", p.Share())
	}
	decided := func() bool {
		c.mu.Lock()
		c.lastLossU = -1
		gate := c.gateDem + c.gateSkipped
		c.mu.Unlock()
		read()
		p.adjust()
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.lastLossU >= 0 || c.pend.accesses() > 0 || c.gateDem+c.gateSkipped != gate
	}
	for i := 0; i < trialSettle; i++ {
		if decided() {
			t.Fatalf("interval %d after the return: the controller decided, gathered evidence or ran the gate", i+1)
		}
	}
	if !decided() {
		t.Fatalf("%d intervals after the return: want the controller deciding again", trialSettle+1)
	}
}
