package bufferpool

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func testController() *controller {
	c := &controller{}
	c.init(Options{MinShare: 0.05})
	c.tDisk = ewma{v: float64(100 * time.Microsecond), valid: true}
	c.tDecom = ewma{v: float64(20 * time.Microsecond), valid: true}
	c.tComp = ewma{v: float64(40 * time.Microsecond), valid: true}
	c.evictedUnits = 100 // the depth histogram has seen every depth (farViewReady)
	return c
}

// A 64 MiB pool, both tiers full and evicting.
var fullMem = memState{frameBytes: 32 << 20, imageBytes: 32 << 20, resident: 64 << 20, avail: 64 << 20, budget: 64 << 20}

// ghosts is evidence with both tiers evicting: uOnC image hits on the
// uncompressed ghost, cOnMiss misses on the compressed one.
func ghosts(uOnC, cOnMiss int64) evidence {
	return evidence{uOnC: uOnC, cOnMiss: cOnMiss, frameEvictions: 100, imageEvictions: 100, demotions: 100, compressions: 100,
		hitsU: 1000, hitsC: 1000, misses: 1000}
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
		r = c.decide(r, r, 0.5, fullMem, ghosts(10, 100))
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
		next := c.decide(r, r, 0.5, fullMem, ghosts(100, 10))
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
		r = c.decide(r, r, 0.5, fullMem, ghosts(int64(u), int64(cm)))
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
		next := c.decide(r, r, 0.5, fullMem, ghosts(100, cm))
		swings = append(swings, math.Abs(next-r))
		r = next
	}
	if last := swings[len(swings)-1]; last > 0.01 {
		t.Fatalf("alternating inputs: last swing %.4f, want ≤ 0.01 (swings %v)", last, swings)
	}
}

// TestControllerWithoutMisses: the data fits in memory compressed, so
// there is no miss at all and T_disk_read was measured only while the
// pool warmed up. The frames evict (each image hit promotes a page), the
// images do not. The controller must keep the images holding everything
// when losing some of them costs more (disk reads) than more frames would
// save (decompressions), and give the frames memory when disk reads are
// cheap — it used to return at once while T_disk_read was unknown, and
// never compared the two sides without image evictions.
func TestControllerWithoutMisses(t *testing.T) {
	mem := memState{frameBytes: 24 << 20, imageBytes: 40 << 20, resident: 64 << 20, avail: 64 << 20, budget: 64 << 20}
	// 10,000 image hits per decision; 5% of them on pages just evicted
	// from frames (the uncompressed ghost, a tenth of the budget).
	ev := evidence{uOnC: 500, hitsU: 5000, hitsC: 10000, frameEvictions: 10000, demotions: 10000}
	c := testController()
	r := 0.9
	for i := 0; i < 50; i++ {
		r = c.decide(r, 40.0/64, 0.5, mem, ev)
	}
	// Losing a tenth of the budget of images (6.4 of 40 MiB: 16% of their
	// 10,000 hits, at 100 µs more each) costs more than 500 × 20 µs.
	if r < 40.0/64 {
		t.Fatalf("slow disk, no misses: R = %.3f, below the %.3f the images need (gain U %.0f, loss C %.0f)", r, 40.0/64, c.lastGainU, c.lastLossC)
	}
	// A disk read cheaper than a decompression: frames should win.
	c = testController()
	c.tDisk.v = float64(2 * time.Microsecond)
	c.tDecom.v = float64(60 * time.Microsecond)
	r = 0.9
	for i := 0; i < 50; i++ {
		r = c.decide(r, math.Min(r, 40.0/64), 0.5, mem, ev)
	}
	if r >= 40.0/64-0.05 {
		t.Fatalf("fast disk, no misses: R = %.3f, want the frames to take memory from the images (gain U %.0f, loss C %.0f)", r, c.lastGainU, c.lastLossC)
	}
	// T_disk_read never measured (the pool made its pages itself): the
	// images, which hold every page, are not given up on a guess.
	c = testController()
	c.tDisk = ewma{}
	if got := c.decide(0.9, 40.0/64, 0.5, mem, ev); got < 40.0/64 {
		t.Fatalf("T_disk_read unknown, no miss: R = %.3f, below the images' %.3f", got, 40.0/64)
	}
}

// TestControllerStartsFromUse: when the images use less than R, the first
// step down starts from their use, and when they use more, the first step
// up starts from there: R never drifts where it changes nothing.
func TestControllerStartsFromUse(t *testing.T) {
	c := testController()
	if r := c.decide(0.9, 0.3, 0.5, fullMem, ghosts(100, 0)); r > 0.3 {
		t.Errorf("frames win, images use 0.3 of memory, R was 0.9: R = %.3f, want ≤ 0.3", r)
	}
	c = testController()
	if r := c.decide(0.1, 0.6, 0.5, fullMem, ghosts(0, 100)); r < 0.6 {
		t.Errorf("images win, images use 0.6 of memory, R was 0.1: R = %.3f, want ≥ 0.6", r)
	}
}

// TestControllerHoldsAtCopiesFloor: with the frames winning by the ghosts
// but the compressed ghost still seeing misses on a device where images
// pay, the hill climb stops at α/(1+α) + 0.02, holds there for
// floorPatience decisions without counting steps, then crosses; where
// images do not pay (decompression dearer than a disk read), it does not
// stop.
func TestControllerHoldsAtCopiesFloor(t *testing.T) {
	const alpha = 0.5
	floor := copiesFloor(alpha)
	c := testController()
	r := 0.9
	for i := 0; i < 40 && r > floor+0.01; i++ {
		r = c.decide(r, r, alpha, fullMem, ghosts(100, 10))
	}
	if r < floor || r > floor+0.01 {
		t.Fatalf("frames win, images pay: R = %.3f, want the floor %.3f", r, floor)
	}
	held, steps := r, c.adjustments
	for i := 0; i < floorPatience; i++ {
		if r = c.decide(r, r, alpha, fullMem, ghosts(100, 10)); r != held {
			t.Fatalf("decision %d at the floor: R = %.3f, want it held at %.3f", i, r, held)
		}
	}
	if c.adjustments != steps {
		t.Errorf("%d steps counted while R was held at the floor", c.adjustments-steps)
	}
	if r = c.decide(r, r, alpha, fullMem, ghosts(100, 10)); r >= floor {
		t.Errorf("after %d decisions held at the floor: R = %.3f, want below it", floorPatience, r)
	}
	// Decompression dearer than a disk read: no floor.
	c = testController()
	c.tDisk.v, c.tDecom.v = float64(5*time.Microsecond), float64(80*time.Microsecond)
	r = 0.9
	for i := 0; i < 40; i++ {
		r = c.decide(r, r, alpha, fullMem, ghosts(100, 10))
	}
	if r != 0.05 {
		t.Errorf("images do not pay: R = %.3f, want 0.05", r)
	}
}

// poisson draws a Poisson count of the given mean (Knuth's method; the
// means here are small).
func poisson(rng *rand.Rand, mean float64) int64 {
	l, k, p := math.Exp(-mean), int64(0), 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// TestControllerWaitsOutNoise: document 000's NVMe + deflate-6 scenario
// as the controller saw it when TestControllerFastDeviceSlowCodec failed
// (one run in six): per decision about 8 image hits on the uncompressed
// ghost (130 µs each) against 22 misses on the compressed one (35 µs
// each), compressing demotions off. The frames win by 1.35× on average,
// but counts that small let the images win one decision in four, and R
// hovered at 0.35–0.50 (the rule without the noise test rises 2–9 times
// in 60 such decisions, 220 in 20 runs). Steps must wait for evidence
// beyond the noise: over 20 runs of 60 decisions, R rises at most twice
// per run and 10 times in all, and ends at 0.15 or below in most; and evidence that would pass without its
// noise is kept for the next decision rather than thrown away.
func TestControllerWaitsOutNoise(t *testing.T) {
	costs := func(c *controller) {
		c.tDisk.v, c.tDecom.v, c.tComp.v = float64(29*time.Microsecond), float64(130*time.Microsecond), float64(250*time.Microsecond)
		c.tHitC = ewma{v: float64(130 * time.Microsecond), valid: true}
		c.tMiss = ewma{v: float64(165 * time.Microsecond), valid: true}
	}
	const decisions = 60
	var finals []float64
	totalRises := 0
	for seed := uint64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		c := testController()
		costs(c)
		r := 0.5
		var trace []float64
		rises := 0
		for i := 0; i < decisions; i++ {
			c.pend.add(evidence{uOnC: poisson(rng, 8), cOnMiss: poisson(rng, 22), frameEvictions: 600, imageEvictions: 550,
				demotions: 600, hitsU: 40, hitsC: 70, misses: 550})
			next := c.decidePending(r, r, 0.38, fullMem)
			trace = append(trace, next)
			if next > r {
				rises++
			}
			r = next
		}
		finals = append(finals, r)
		totalRises += rises
		if r >= 0.48 || rises > 2 {
			t.Errorf("seed %d: R = %.3f after %d decisions favouring the frames 1.35×, %d rises on the way, want it well below the start and at most two rises; trace %.2f", seed, r, decisions, rises, trace)
		}
	}
	slices.Sort(finals)
	t.Logf("final R over 20 runs: %.2f; %d rises in all", finals, totalRises)
	if totalRises > 10 {
		t.Errorf("%d rises in 20 runs of %d decisions favouring the frames, want at most 10", totalRises, decisions)
	}
	if median := finals[len(finals)/2]; median > 0.15 {
		t.Errorf("median final R %.3f after %d decisions favouring the frames, want ≤ 0.15", median, decisions)
	}
	// One interval's thin evidence that the images win: no step, and it is
	// kept for the next decision.
	c := testController()
	costs(c)
	c.pend = evidence{uOnC: 4, cOnMiss: 27, frameEvictions: 600, imageEvictions: 550, demotions: 600}
	if r := c.decidePending(0.5, 0.5, 0.38, fullMem); r != 0.5 {
		t.Errorf("4 against 27 ghost hits moved R to %.3f, want it held", r)
	}
	if c.pend.cOnMiss != 27 {
		t.Errorf("thin evidence dropped: pending %+v", c.pend)
	}
}

// TestControllerJumpStartsEvidenceAnew: a decision after a thin one that
// jumps by the far view (depth histogram) moves R, so the evidence that
// moved it must not be kept: kept, it made the next decisions jump again
// and again from each new R on the same image hits (0.90 → 0.75 → … →
// 0.15 in a reviewer's repro).
func TestControllerJumpStartsEvidenceAnew(t *testing.T) {
	c := testController()
	c.tHitC = ewma{v: 20e3, valid: true}
	c.tMiss = ewma{v: 100e3, valid: true}
	c.thin = true // the last decision was thin
	c.pend = evidence{hitsU: 8000, hitsC: 1000, misses: 10, frameEvictions: 1000, demotions: 1000}
	c.pend.depth[depthScale/8] = 1000 // an eighth of the memory below the frames
	r := c.decidePending(0.9, 0.9, 0.5, fullMem)
	if r >= 0.9 || c.jumps != 1 {
		t.Fatalf("shallow image hits: R %.2f after %d jumps, want a jump down", r, c.jumps)
	}
	if c.pend.hitsC != 0 || c.pend.depth[depthScale/8] != 0 {
		t.Fatalf("evidence kept after a jump: %+v", c.pend)
	}
}
