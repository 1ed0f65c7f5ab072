package bufferpool

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func testController() *controller {
	c := &controller{}
	c.init(Options{MinShare: 0.05})
	c.tDisk = ewma{v: float64(100 * time.Microsecond), valid: true}
	c.tDecom = ewma{v: float64(20 * time.Microsecond), valid: true}
	return c
}

// TestControllerConverges feeds the controller synthetic ghost hits: first
// favouring the compressed tier, then (a workload change) the uncompressed
// one. R must move monotonically to each bound and stay there.
func TestControllerConverges(t *testing.T) {
	c := testController()
	r := 0.5
	prev := r
	for i := 0; i < 60; i++ {
		// Many misses on compressed-ghost pages: a slow device.
		r = c.decide(r, 0.5, 10, 0, 100)
		if r < prev {
			t.Fatalf("step %d: R fell from %.3f to %.3f while the compressed tier wins", i, prev, r)
		}
		prev = r
	}
	if r != 0.95 {
		t.Fatalf("R = %.3f after 60 steps favouring the compressed tier, want 0.95", r)
	}
	// Workload change: uncompressed hits now dominate.
	c.tDisk.v = float64(5 * time.Microsecond)
	c.tDecom.v = float64(80 * time.Microsecond)
	steps := 0
	for ; r > 0.05 && steps < 100; steps++ {
		next := c.decide(r, 0.5, 100, 0, 10)
		if next > r {
			t.Fatalf("R rose from %.3f to %.3f while the uncompressed tier wins", r, next)
		}
		r = next
	}
	if r != 0.05 {
		t.Fatalf("R = %.3f after %d steps favouring frames, want 0.05", r, steps)
	}
	t.Logf("reached the floor %d steps after the change", steps)
}

// TestControllerDoesNotOscillate: with the tiers' gains equal up to noise,
// and then with a small true preference hidden in noise, R stays in a
// narrow band instead of swinging between the bounds.
func TestControllerDoesNotOscillate(t *testing.T) {
	c := testController()
	rng := rand.New(rand.NewPCG(1, 2))
	r := 0.5
	// gainU = uOnC × 20 µs; gainC = cOnMiss × 100 µs × (1 − 0.5): equal
	// when cOnMiss = 0.4 × uOnC.
	lo, hi := r, r
	for i := 0; i < 500; i++ {
		u := 100 + rng.IntN(11) - 5
		cm := 40 + rng.IntN(5) - 2
		r = c.decide(r, 0.5, int64(u), 0, int64(cm))
		lo, hi = math.Min(lo, r), math.Max(hi, r)
	}
	if hi-lo > 0.1 {
		t.Fatalf("balanced gains: R wandered over [%.3f, %.3f]", lo, hi)
	}
	// Alternating preferences just beyond the dead band: the step halves
	// on each reversal, so the swing dies out.
	var swings []float64
	for i := 0; i < 40; i++ {
		cm := int64(50)
		if i%2 == 1 {
			cm = 30
		}
		next := c.decide(r, 0.5, 100, 0, cm)
		swings = append(swings, math.Abs(next-r))
		r = next
	}
	if last := swings[len(swings)-1]; last > 0.01 {
		t.Fatalf("alternating inputs: last swing %.4f, want ≤ 0.01 (swings %v)", last, swings)
	}
}
