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

// TestFramesTrialWhereImagesDoNotPay: where document 000's model says
// images do not pay, but without framesByModel's margin (a fast device
// and a slow codec: 25 µs reads, 50 µs decompressions, α 0.37), neither
// a climb stalled in its noise wanting R up nor the misses frames alone
// would add hold the frames arm back: a trial finds out. A climb that
// still raises R, or a device and codec by which images pay, still do.
func TestFramesTrialWhereImagesDoNotPay(t *testing.T) {
	const alpha = 0.37
	borderline := borderlineControllers(t, alpha, 25*time.Microsecond, 50*time.Microsecond,
		memState{frameBytes: 22 << 20, imageBytes: 42 << 20, resident: 64 << 20, avail: 64 << 20, budget: 64 << 20})
	// The image hits lie deeper than frames alone reach: they would miss
	// four times as often.
	ev := evidence{hitsU: 150, hitsC: 700, misses: 150, frameEvictions: 100, demotions: 100, depth: depthAt(1.5, 700)}
	for _, tc := range []struct {
		name     string
		c        *controller
		wantedUp bool
		stalled  int
		want     bool
	}{
		{"climb stalled, images do not pay", borderline(), true, trialPatience, true},
		{"climb one decision short of stalled", borderline(), true, trialPatience - 1, false},
		{"climb stalled, images pay", testController(), true, trialPatience, false},
		{"no climb, images do not pay: the added misses do not hold the arm", borderline(), false, 0, true},
		{"no climb, images pay: the added misses hold the arm", testController(), false, 0, false},
	} {
		tc.c.upStalled = tc.stalled
		tc.c.mem = borderline().mem
		if got := tc.c.mayPay(0.66, 0.66, alpha, ev, tc.wantedUp, true, time.Time{})[armFrames]; got != tc.want {
			t.Errorf("%s: the frames arm may pay %v, want %v", tc.name, got, tc.want)
		}
	}
}

// borderlineControllers returns a maker of test controllers with the
// given memory and the costs T_disk_read and T_decom, after checking that
// at α they are borderline: document 000's model says images do not pay
// (imagesDoNotPay), but not by framesByModel's margin.
func borderlineControllers(t *testing.T, alpha float64, disk, decom time.Duration, mem memState) func() *controller {
	t.Helper()
	newController := func() *controller {
		c := testController()
		c.tDisk.v, c.tDecom.v = float64(disk), float64(decom)
		c.mem = mem
		return c
	}
	if c := newController(); c.framesByModel(alpha) || !c.imagesDoNotPay(alpha) {
		t.Fatal("the costs are not borderline: the model favours frames clearly, or images pay")
	}
	return newController
}
