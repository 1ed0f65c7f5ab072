package bufferpool

import (
	"testing"
	"time"
)

// depthAt is a depth histogram with n image hits at depth x (in units of
// the page memory).
func depthAt(x float64, n int64) (h [depthBuckets]int64) {
	h[min(int(x*depthScale), depthBuckets-1)] = n
	return h
}

// TestFramesTrialNotWhereFramesAloneWouldMiss: the frames arm is not tried
// where the depth histogram says frames alone would turn the image hits
// into misses the pool does not have now (data that fits only compressed:
// JSON events at 2× the memory lost such a trial and took 4 s to refill
// its images). It is still tried where frames alone would hold the pages
// the images serve (data that fits raw), and where the pool misses
// already and frames alone would add few beside those.
func TestFramesTrialNotWhereFramesAloneWouldMiss(t *testing.T) {
	start := time.Unix(1000, 0)
	// Images hold 0.9 of the memory; frames alone would reach depth
	// 0.85 + 0.05/α = 0.95 (α 0.5, startFramesTrial's).
	mem := memState{frameBytes: 6 << 20, imageBytes: 57.6 * (1 << 20), resident: 64 << 20, avail: 64 << 20, budget: 64 << 20}
	for _, tc := range []struct {
		name  string
		ev    evidence
		trial bool
	}{
		{"fits only compressed, nothing misses", evidence{hitsU: 700, hitsC: 299, misses: 1, frameEvictions: 100, demotions: 100, depth: depthAt(1.5, 299)}, false},
		{"image hits deeper than the histogram reaches", evidence{hitsU: 700, hitsC: 299, misses: 1, frameEvictions: 100, demotions: 100, depth: depthAt(9, 299)}, false},
		{"fits raw: frames alone would hold it", evidence{hitsU: 700, hitsC: 299, misses: 1, frameEvictions: 100, demotions: 100, depth: depthAt(0.5, 299)}, true},
		{"misses already, frames alone add a third", evidence{hitsU: 450, hitsC: 170, misses: 380, frameEvictions: 100, demotions: 100, depth: depthAt(1.5, 170)}, true},
		{"too few image hits to trust the histogram", evidence{hitsU: 700, hitsC: 200, misses: 1, frameEvictions: 100, demotions: 100, depth: depthAt(1.5, 200)}, true},
	} {
		c := testController()
		c.mem = mem
		if tc.name == "too few image hits to trust the histogram" {
			tc.ev.hitsU = 599 // images still serve over a tenth
		}
		startFramesTrial(c, 0.9, 0, false, tc.ev, start)
		if got := c.trial.active && c.trial.arm == armFrames; got != tc.trial {
			t.Errorf("%s: frames trial %v, want %v", tc.name, got, tc.trial)
		}
	}
}
