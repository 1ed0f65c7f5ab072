package bufferpool

import "testing"

// windowOf adds up intervals of 100 ms with the given access counts, each
// access costing perAccess ns by the objective.
func windowOf(perAccess float64, counts ...float64) window {
	var w window
	for _, n := range counts {
		w.add(interval(n*perAccess, n, 100e6))
	}
	return w
}

// TestTrialRateWithinNoiseDecidesNothing: a trial's rate decides only
// where it differs from the window before by more than the noise of the
// intervals' rates. Beside two busy loops on two cores, adjacent windows
// differed by up to 40% in rate while the times per access held 0.5–0.7×
// apart, and a copy trial faster by every other measure lost on the rate
// (TestControllerLeavesExclusiveRegime, 3 runs in 8). There the time per
// access judges instead; where the intervals' rates are steady, the rate
// still decides, against the time per access.
func TestTrialRateWithinNoiseDecidesNothing(t *testing.T) {
	steadyBefore := windowOf(5000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000)
	steadyDuring := windowOf(3000, 800, 800, 800, 800, 800, 800, 800, 800, 800, 800)
	if higher, decided := steadyDuring.byRate(steadyBefore); !decided || higher {
		t.Fatalf("steady rates 0.8× the window before: decided %v, higher %v; want a decided loss", decided, higher)
	}
	if steadyDuring.beats(steadyBefore) {
		t.Fatal("steady rates 0.8× the window before: the trial won on its lower time per access")
	}
	noisyBefore := windowOf(5000, 500, 1500, 500, 1500, 500, 1500, 500, 1500, 500, 1500)
	noisyDuring := windowOf(3000, 400, 1200, 400, 1200, 400, 1200, 400, 1200, 400, 1200)
	if _, decided := noisyDuring.byRate(noisyBefore); decided {
		t.Fatalf("rates 0.8× the window before within their noise (standard error %.0f/s against a difference of %.0f/s): decided by rate",
			noisyDuring.rateSE(noisyBefore), noisyBefore.rate()-noisyDuring.rate())
	}
	if !noisyDuring.beats(noisyBefore) {
		t.Fatal("rates within their noise, time per access 0.6× the window before: the trial lost")
	}
	// Windows without per-interval rates (one interval, or built whole)
	// are judged by their rates as before.
	whole := window{cost: 1, n: 800, wall: 1e9}
	if _, decided := whole.byRate(window{cost: 1, n: 1000, wall: 1e9}); !decided {
		t.Fatal("windows without interval rates: not decided by a 20% rate difference")
	}
}
