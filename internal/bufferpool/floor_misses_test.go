package bufferpool

import (
	"testing"
	"time"
)

// TestCopyTrialNearFloorWithMisses: with R held at the copies floor or
// just above it (the climb's sides taking turns) while the compressed
// ghost sees misses on at least a quarter of a percent of the accesses,
// the copy arm is tried; with fewer such misses, further above the floor,
// where images do not pay, or within a kept copy trial's hold (a keep on
// a tie holds the floor only, and the climb may come back to it), it is
// not. Cached writes at 0.5× the memory
// hovered at R 0.35–0.43 with 1–2% misses where R 0.95 has none
// (docs/BENCHMARKS.md, twenty-ninth session).
func TestCopyTrialNearFloorWithMisses(t *testing.T) {
	const alpha = 0.5
	floor := copiesFloor(alpha)
	start := time.Unix(1000, 0)
	// Demotions compress nothing (pages keep their read images) and
	// 0.59% of the accesses are misses the compressed ghost saw.
	missing := evidence{hitsU: 15000, hitsC: 1500, misses: 400, frameEvictions: 2000, imageEvictions: 300, demotions: 2000, cOnMiss: 100}
	few := missing
	few.cOnMiss = 20 // 0.12%
	try := func(c *controller, r float64, ev evidence) bool {
		return tryCopyTrial(c, r, alpha, ev, true, start)
	}
	for _, r := range []float64{floor - 0.005, floor, floor + 0.03} {
		if c := testController(); !try(c, r, missing) || c.trial.share != 0.95 {
			t.Errorf("R %.3f (floor %.3f), 0.59%% ghost misses: want a copy trial to 0.95", r, floor)
		}
	}
	slowCodec := testController()
	slowCodec.tDecom = ewma{v: float64(500 * time.Microsecond), valid: true}
	for _, tc := range []struct {
		name string
		c    *controller
		r    float64
		ev   evidence
	}{
		{"ghost misses on 0.12% of the accesses", testController(), floor, few},
		{"R a step and more above the floor", testController(), floor + steadyDrift, missing},
		{"decompression dearer than the reads images spare", slowCodec, floor, missing},
		{"within a kept copy trial's hold", heldController(start), floor, missing},
	} {
		if try(tc.c, tc.r, tc.ev) {
			t.Errorf("%s: a copy trial started", tc.name)
		}
	}
}

// heldController is a controller within the hold of a copy trial kept at
// now.
func heldController(now time.Time) *controller {
	c := testController()
	c.trial.arms[armCopy].keptUntil = now.Add(time.Minute)
	return c
}
